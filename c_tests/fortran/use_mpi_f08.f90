! `use mpi_f08` program built with MPICH's mpif90.mpich, run on oxmpi by
! c_tests/fortran_mpich.sh: derived handle types, type(MPI_Status),
! MPI_STATUS_IGNORE, MPI_IN_PLACE, a gather and a duplicated communicator;
! MPI_TAG_UB, a keyval with mpi_f08 copy and delete callbacks and a
! generalized request with mpi_f08 callbacks.
module f08_callbacks
  use mpi_f08
  implicit none
  integer :: copies = 0, deletes = 0, queries = 0, frees = 0
contains
  subroutine copy_cb(oldcomm, keyval, extra_state, val_in, val_out, flag, ierror)
    type(MPI_Comm) :: oldcomm
    integer :: keyval, ierror
    integer(kind=MPI_ADDRESS_KIND) :: extra_state, val_in, val_out
    logical :: flag
    copies = copies + 1
    val_out = val_in + extra_state
    flag = .true.
    ierror = MPI_SUCCESS
  end subroutine

  subroutine delete_cb(comm, keyval, val, extra_state, ierror)
    type(MPI_Comm) :: comm
    integer :: keyval, ierror
    integer(kind=MPI_ADDRESS_KIND) :: val, extra_state
    if (val == 3 + extra_state) deletes = deletes + 1
    ierror = MPI_SUCCESS
  end subroutine

  subroutine query_cb(extra_state, status, ierror)
    integer(kind=MPI_ADDRESS_KIND) :: extra_state
    type(MPI_Status) :: status
    integer :: ierror
    queries = queries + 1
    call MPI_Status_set_elements(status, MPI_INTEGER, 2, ierror)
    call MPI_Status_set_cancelled(status, .false., ierror)
    status%MPI_TAG = int(extra_state)
    ierror = MPI_SUCCESS
  end subroutine

  subroutine free_cb(extra_state, ierror)
    integer(kind=MPI_ADDRESS_KIND) :: extra_state
    integer :: ierror
    frees = frees + 1
    ierror = MPI_SUCCESS
  end subroutine

  subroutine cancel_cb(extra_state, complete, ierror)
    integer(kind=MPI_ADDRESS_KIND) :: extra_state
    logical :: complete
    integer :: ierror
    ierror = MPI_SUCCESS
  end subroutine
end module

program usempif08
  use mpi_f08
  use f08_callbacks
  implicit none
  integer :: rank, nprocs, errs, i, cnt
  integer :: buf(5)
  integer, allocatable :: all(:)
  type(MPI_Status) :: st
  type(MPI_Comm) :: dup, dup2
  type(MPI_Request) :: req
  integer :: key
  integer(kind=MPI_ADDRESS_KIND) :: val, extra, greq_state
  logical :: flag
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
  call MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, val, flag)
  if (.not. flag .or. val < 32767) errs = errs + 1
  extra = 10
  call MPI_Comm_create_keyval(copy_cb, delete_cb, key, extra)
  val = 3
  call MPI_Comm_set_attr(dup, key, val)
  call MPI_Comm_dup(dup, dup2)
  call MPI_Comm_get_attr(dup2, key, val, flag)
  if (copies /= 1 .or. .not. flag .or. val /= 13) errs = errs + 1
  call MPI_Comm_free(dup2)
  if (deletes /= 1) errs = errs + 1
  call MPI_Comm_free_keyval(key)
  greq_state = 61
  call MPI_Grequest_start(query_cb, free_cb, cancel_cb, greq_state, req)
  call MPI_Grequest_complete(req)
  call MPI_Wait(req, st)
  call MPI_Get_count(st, MPI_INTEGER, cnt)
  if (queries /= 1 .or. frees /= 1 .or. st%MPI_TAG /= 61 .or. cnt /= 2) errs = errs + 1
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
