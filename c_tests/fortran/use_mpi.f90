! `use mpi` program built with MPICH's mpif90.mpich, run on oxmpi by
! c_tests/fortran_mpich.sh: nonblocking point-to-point with
! MPI_STATUSES_IGNORE, a reduction of doubles, a user operation written in
! Fortran, MPI_Wtime, and the library version (printed, so the test can
! tell which library ran).
program usempi
  use mpi
  implicit none
  integer :: ierr, rank, nprocs, errs, reqs(2), left, right, resultlen
  integer :: op, mine(2), folded(2)
  external :: twice_sum
  double precision :: x, s, t0
  integer :: sendv(3), recvv(3)
  character(len=MPI_MAX_LIBRARY_VERSION_STRING) :: version
  errs = 0
  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  t0 = MPI_Wtime()
  right = mod(rank + 1, nprocs)
  left = mod(rank + nprocs - 1, nprocs)
  sendv = rank
  recvv = -1
  call MPI_Irecv(recvv, 3, MPI_INTEGER, left, 9, MPI_COMM_WORLD, reqs(1), ierr)
  call MPI_Isend(sendv, 3, MPI_INTEGER, right, 9, MPI_COMM_WORLD, reqs(2), ierr)
  call MPI_Waitall(2, reqs, MPI_STATUSES_IGNORE, ierr)
  if (any(recvv /= left)) errs = errs + 1
  x = 0.5d0 * rank
  call MPI_Reduce(x, s, 1, MPI_DOUBLE_PRECISION, MPI_SUM, 0, MPI_COMM_WORLD, ierr)
  if (rank == 0 .and. abs(s - 0.25d0 * nprocs * (nprocs - 1)) > 1d-12) errs = errs + 1
  if (MPI_Wtime() < t0) errs = errs + 1
  call MPI_Op_create(twice_sum, .true., op, ierr)
  mine = [rank, 1]
  call MPI_Allreduce(mine, folded, 2, MPI_INTEGER, op, MPI_COMM_WORLD, ierr)
  ! twice_sum: inout = 2 * (in + inout), folded nprocs - 1 times.
  if (nprocs == 2 .and. any(folded /= [2, 4])) errs = errs + 1
  call MPI_Op_free(op, ierr)
  call MPI_Get_library_version(version, resultlen, ierr)
  if (rank == 0) print '(A,A)', 'library: ', version(1:min(resultlen, 40))
  call MPI_Allreduce(MPI_IN_PLACE, errs, 1, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, ierr)
  if (rank == 0) then
    if (errs == 0) then
      print '(A)', 'No Errors'
    else
      print *, 'Found', errs, 'errors'
    end if
  end if
  call MPI_Finalize(ierr)
end program

! A user reduction: inoutvec = 2 * (invec + inoutvec).
subroutine twice_sum(invec, inoutvec, n, datatype)
  implicit none
  integer :: n, datatype, invec(n), inoutvec(n)
  inoutvec = 2 * (invec + inoutvec)
end subroutine
