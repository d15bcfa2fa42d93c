! mpif.h (Fortran 77 style) program built with MPICH's mpif90.mpich, run
! on oxmpi by c_tests/fortran_mpich.sh: point-to-point with a status,
! MPI_IN_PLACE, a broadcast, a split communicator. Rank 0 prints
! "No Errors" when every check passed.
      program mpifh
      implicit none
      include 'mpif.h'
      integer ierr, rank, nprocs, buf(4), status(MPI_STATUS_SIZE)
      integer total, errs, i, cnt, half, hrank, hsize, val
      errs = 0
      call MPI_INIT(ierr)
      call MPI_COMM_RANK(MPI_COMM_WORLD, rank, ierr)
      call MPI_COMM_SIZE(MPI_COMM_WORLD, nprocs, ierr)
      total = rank + 1
      call MPI_ALLREDUCE(MPI_IN_PLACE, total, 1, MPI_INTEGER, MPI_SUM,
     &     MPI_COMM_WORLD, ierr)
      if (total .ne. nprocs * (nprocs + 1) / 2) errs = errs + 1
      if (rank .eq. 0) then
         do i = 1, 4
            buf(i) = 10 * i
         end do
         call MPI_SEND(buf, 4, MPI_INTEGER, 1, 3, MPI_COMM_WORLD, ierr)
      else if (rank .eq. 1) then
         call MPI_RECV(buf, 4, MPI_INTEGER, MPI_ANY_SOURCE, MPI_ANY_TAG,
     &        MPI_COMM_WORLD, status, ierr)
         call MPI_GET_COUNT(status, MPI_INTEGER, cnt, ierr)
         if (status(MPI_SOURCE) .ne. 0 .or. status(MPI_TAG) .ne. 3
     &        .or. cnt .ne. 4 .or. buf(4) .ne. 40) errs = errs + 1
      endif
      val = 0
      if (rank .eq. 0) val = 42
      call MPI_BCAST(val, 1, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
      if (val .ne. 42) errs = errs + 1
      call MPI_COMM_SPLIT(MPI_COMM_WORLD, mod(rank, 2), rank, half,
     &     ierr)
      call MPI_COMM_RANK(half, hrank, ierr)
      call MPI_COMM_SIZE(half, hsize, ierr)
      if (hrank .ne. rank / 2) errs = errs + 1
      call MPI_COMM_FREE(half, ierr)
      call MPI_ALLREDUCE(MPI_IN_PLACE, errs, 1, MPI_INTEGER, MPI_SUM,
     &     MPI_COMM_WORLD, ierr)
      if (rank .eq. 0) then
         if (errs .eq. 0) then
            print '(A)', 'No Errors'
         else
            print *, 'Found', errs, 'errors'
         endif
      endif
      call MPI_FINALIZE(ierr)
      end
