! `use mpi_f08` program built with MPICH's mpif90.mpich, run on oxmpi by
! c_tests/fortran_mpich.sh: derived handle types, type(MPI_Status),
! MPI_STATUS_IGNORE, MPI_IN_PLACE, a gather and a duplicated communicator.
program usempif08
  use mpi_f08
  implicit none
  integer :: rank, nprocs, errs, i, cnt
  integer :: buf(5)
  integer, allocatable :: all(:)
  type(MPI_Status) :: st
  type(MPI_Comm) :: dup
  errs = 0
  call MPI_Init()
  call MPI_Comm_rank(MPI_COMM_WORLD, rank)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs)
  call MPI_Comm_dup(MPI_COMM_WORLD, dup)
  if (rank == 0) then
    buf = [(i * 3, i = 1, 5)]
    call MPI_Send(buf, 5, MPI_INTEGER, 1, 5, dup)
  else if (rank == 1) then
    call MPI_Recv(buf, 5, MPI_INTEGER, 0, 5, dup, st)
    call MPI_Get_count(st, MPI_INTEGER, cnt)
    if (st%MPI_SOURCE /= 0 .or. st%MPI_TAG /= 5 .or. cnt /= 5 .or. buf(5) /= 15) errs = errs + 1
  end if
  if (rank == 0) then
    call MPI_Send(buf, 1, MPI_INTEGER, 1, 6, dup)
  else if (rank == 1) then
    call MPI_Recv(buf, 1, MPI_INTEGER, 0, 6, dup, MPI_STATUS_IGNORE)
  end if
  allocate(all(nprocs))
  call MPI_Gather(rank * 2, 1, MPI_INTEGER, all, 1, MPI_INTEGER, 0, dup)
  if (rank == 0) then
    do i = 1, nprocs
      if (all(i) /= 2 * (i - 1)) errs = errs + 1
    end do
  end if
  call MPI_Comm_free(dup)
  call MPI_Allreduce(MPI_IN_PLACE, errs, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD)
  if (rank == 0) then
    if (errs == 0) then
      print '(A)', 'No Errors'
    else
      print *, 'Found', errs, 'errors'
    end if
  end if
  call MPI_Finalize()
end program
