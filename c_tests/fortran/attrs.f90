! `use mpi` program built with MPICH's mpif90.mpich, run on oxmpi by
! c_tests/fortran_mpich.sh: attributes, keyvals and generalized requests,
! which MPICH's Fortran binding does through libmpich's MPII_* helpers.
! Checks predefined attributes (MPI_TAG_UB, MPI_WTIME_IS_GLOBAL,
! MPI_APPNUM, MPI_UNIVERSE_SIZE, the window's), communicator keyvals with
! Fortran copy and delete callbacks (counted, with the values and
! extra_state they get), MPI_COMM_DUP_FN and MPI_COMM_NULL_COPY_FN, type
! and window attributes, the MPI-1 MPI_Keyval_create/MPI_Attr_put/
! MPI_Attr_get, and MPI_Grequest_start with Fortran query, free and cancel
! subroutines. Prints `No Errors` on rank 0 only when every check passes.
module attr_state
  use mpi
  implicit none
  integer :: errs = 0
  integer :: copies = 0, deletes = 0, type_deletes = 0, win_deletes = 0
  integer :: old_copies = 0, old_deletes = 0
  integer :: queries = 0, frees = 0, cancels = 0
  integer(kind=MPI_ADDRESS_KIND) :: extra = 1000, last_deleted = -1
  integer :: old_extra = 2000, old_last_deleted = -1
  integer(kind=MPI_ADDRESS_KIND) :: greq_state(2) = [7, 8]
contains
  subroutine check(ok, what)
    logical, intent(in) :: ok
    character(len=*), intent(in) :: what
    if (.not. ok) then
      errs = errs + 1
      print '(A,A)', 'check failed: ', what
    end if
  end subroutine
end module

! Copies a communicator attribute as its value + 1.
subroutine copy_plus_one(oldcomm, keyval, extra_state, val_in, val_out, flag, ierr)
  use attr_state
  implicit none
  integer :: oldcomm, keyval, ierr
  integer(kind=MPI_ADDRESS_KIND) :: extra_state, val_in, val_out
  logical :: flag
  copies = copies + 1
  call check(extra_state == 1000, 'copy callback gets its extra_state')
  val_out = val_in + 1
  flag = .true.
  ierr = MPI_SUCCESS
end subroutine

subroutine delete_count(comm, keyval, val, extra_state, ierr)
  use attr_state
  implicit none
  integer :: comm, keyval, ierr
  integer(kind=MPI_ADDRESS_KIND) :: val, extra_state
  deletes = deletes + 1
  last_deleted = val
  call check(extra_state == 1000, 'delete callback gets its extra_state')
  ierr = MPI_SUCCESS
end subroutine

subroutine type_delete_count(datatype, keyval, val, extra_state, ierr)
  use attr_state
  implicit none
  integer :: datatype, keyval, ierr
  integer(kind=MPI_ADDRESS_KIND) :: val, extra_state
  type_deletes = type_deletes + 1
  call check(val == 77, 'type delete callback gets the value')
  ierr = MPI_SUCCESS
end subroutine

subroutine win_delete_count(win, keyval, val, extra_state, ierr)
  use attr_state
  implicit none
  integer :: win, keyval, ierr
  integer(kind=MPI_ADDRESS_KIND) :: val, extra_state
  win_deletes = win_deletes + 1
  call check(val == 99, 'window delete callback gets the value')
  ierr = MPI_SUCCESS
end subroutine

! MPI-1 callbacks: every argument an INTEGER.
subroutine old_copy_double(oldcomm, keyval, extra_state, val_in, val_out, flag, ierr)
  use attr_state
  implicit none
  integer :: oldcomm, keyval, extra_state, val_in, val_out, ierr
  logical :: flag
  old_copies = old_copies + 1
  call check(extra_state == 2000, 'MPI-1 copy callback gets its extra_state')
  val_out = 2 * val_in
  flag = .true.
  ierr = MPI_SUCCESS
end subroutine

subroutine old_delete_count(comm, keyval, val, extra_state, ierr)
  use attr_state
  implicit none
  integer :: comm, keyval, val, extra_state, ierr
  old_deletes = old_deletes + 1
  old_last_deleted = val
  ierr = MPI_SUCCESS
end subroutine

! Generalized request callbacks: the status says 3 integers, tag 42, and
! cancelled once cancel was called.
subroutine greq_query(extra_state, status, ierr)
  use attr_state
  implicit none
  integer(kind=MPI_ADDRESS_KIND) :: extra_state
  integer :: status(MPI_STATUS_SIZE), ierr
  queries = queries + 1
  call MPI_Status_set_elements(status, MPI_INTEGER, 3, ierr)
  call MPI_Status_set_cancelled(status, extra_state == 8 .and. cancels > 0, ierr)
  status(MPI_SOURCE) = MPI_UNDEFINED
  status(MPI_TAG) = 42
  ierr = MPI_SUCCESS
end subroutine

subroutine greq_free(extra_state, ierr)
  use attr_state
  implicit none
  integer(kind=MPI_ADDRESS_KIND) :: extra_state
  integer :: ierr
  frees = frees + 1
  call check(extra_state == 7 .or. extra_state == 8, 'free callback gets its extra_state')
  ierr = MPI_SUCCESS
end subroutine

subroutine greq_cancel(extra_state, complete, ierr)
  use attr_state
  implicit none
  integer(kind=MPI_ADDRESS_KIND) :: extra_state
  logical :: complete
  integer :: ierr
  cancels = cancels + 1
  call check(extra_state == 8, 'cancel callback gets its extra_state')
  call check(.not. complete, 'cancel before completion says so')
  ierr = MPI_SUCCESS
end subroutine

program attrs
  use mpi
  use attr_state
  implicit none
  external :: copy_plus_one, delete_count, type_delete_count, win_delete_count
  external :: old_copy_double, old_delete_count, greq_query, greq_free, greq_cancel
  integer :: ierr, rank, nprocs, c1, c2, key, dupkey, nullkey, tkey, wkey, oldkey
  integer :: t, t2, win, req, count, ival
  integer :: status(MPI_STATUS_SIZE)
  integer(kind=MPI_ADDRESS_KIND) :: val, big, addr
  integer :: buf(10)
  logical :: flag, cancelled

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)

  ! Predefined attributes: Fortran gets their values.
  call MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, val, flag, ierr)
  call check(ierr == MPI_SUCCESS .and. flag .and. val >= 32767, 'MPI_TAG_UB')
  call MPI_Attr_get(MPI_COMM_WORLD, MPI_TAG_UB, ival, flag, ierr)
  call check(ierr == MPI_SUCCESS .and. flag .and. ival == val, 'MPI_TAG_UB by MPI_Attr_get')
  call MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_WTIME_IS_GLOBAL, val, flag, ierr)
  call check(flag .and. (val == 0 .or. val == 1), 'MPI_WTIME_IS_GLOBAL')
  call MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, val, flag, ierr)
  call check(flag .and. val == 0, 'MPI_APPNUM')
  call MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, val, flag, ierr)
  call check(.not. flag .or. val >= nprocs, 'MPI_UNIVERSE_SIZE')

  ! A keyval with Fortran copy and delete callbacks, and a value that
  ! needs more than 32 bits.
  call MPI_Comm_create_keyval(copy_plus_one, delete_count, key, extra, ierr)
  call MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, dupkey, extra, ierr)
  call MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, nullkey, extra, ierr)
  call MPI_Comm_dup(MPI_COMM_WORLD, c1, ierr)
  big = 123456789012_MPI_ADDRESS_KIND
  call MPI_Comm_set_attr(c1, key, big, ierr)
  val = 55
  call MPI_Comm_set_attr(c1, dupkey, val, ierr)
  val = 66
  call MPI_Comm_set_attr(c1, nullkey, val, ierr)
  call MPI_Comm_get_attr(c1, key, val, flag, ierr)
  call check(flag .and. val == big, 'get what was set')
  call MPI_Comm_dup(c1, c2, ierr)
  call check(copies == 1, 'MPI_Comm_dup runs the copy callback once')
  call MPI_Comm_get_attr(c2, key, val, flag, ierr)
  call check(flag .and. val == big + 1, 'the copy callback makes the copy')
  call MPI_Comm_get_attr(c2, dupkey, val, flag, ierr)
  call check(flag .and. val == 55, 'MPI_COMM_DUP_FN copies')
  call MPI_Comm_get_attr(c2, nullkey, val, flag, ierr)
  call check(.not. flag, 'MPI_COMM_NULL_COPY_FN does not copy')
  val = 5
  call MPI_Comm_set_attr(c2, key, val, ierr)
  call check(deletes == 1 .and. last_deleted == big + 1, 'replacing deletes the old value')
  call MPI_Comm_free(c2, ierr)
  call check(deletes == 2 .and. last_deleted == 5, 'MPI_Comm_free deletes')
  call MPI_Comm_delete_attr(c1, key, ierr)
  call check(deletes == 3 .and. last_deleted == big, 'MPI_Comm_delete_attr deletes')
  call MPI_Comm_get_attr(c1, key, val, flag, ierr)
  call check(.not. flag, 'a deleted attribute is gone')

  ! MPI-1 keyvals with INTEGER values.
  call MPI_Keyval_create(old_copy_double, old_delete_count, oldkey, old_extra, ierr)
  call MPI_Attr_get(c1, oldkey, ival, flag, ierr)
  call check(ierr == MPI_SUCCESS .and. .not. flag, 'MPI_Attr_get of an unset keyval')
  call MPI_Attr_put(c1, oldkey, 4242, ierr)
  call MPI_Attr_get(c1, oldkey, ival, flag, ierr)
  call check(flag .and. ival == 4242, 'MPI_Attr_get gets what MPI_Attr_put put')
  call MPI_Comm_dup(c1, c2, ierr)
  call check(old_copies == 1, 'MPI-1 copy callback runs')
  call MPI_Attr_get(c2, oldkey, ival, flag, ierr)
  call check(flag .and. ival == 8484, 'MPI-1 copy callback makes the copy')
  call MPI_Comm_free(c2, ierr)
  call check(old_deletes == 1 .and. old_last_deleted == 8484, 'MPI-1 delete on free')
  call MPI_Attr_delete(c1, oldkey, ierr)
  call check(old_deletes == 2 .and. old_last_deleted == 4242, 'MPI_Attr_delete')
  call MPI_Keyval_free(oldkey, ierr)
  call check(oldkey == MPI_KEYVAL_INVALID, 'MPI_Keyval_free')

  call MPI_Comm_free_keyval(key, ierr)
  call MPI_Comm_free_keyval(dupkey, ierr)
  call MPI_Comm_free_keyval(nullkey, ierr)
  call MPI_Comm_free(c1, ierr)

  ! Datatype attributes.
  call MPI_Type_contiguous(2, MPI_INTEGER, t, ierr)
  call MPI_Type_create_keyval(MPI_TYPE_DUP_FN, type_delete_count, tkey, extra, ierr)
  val = 77
  call MPI_Type_set_attr(t, tkey, val, ierr)
  call MPI_Type_get_attr(t, tkey, val, flag, ierr)
  call check(ierr == MPI_SUCCESS .and. flag .and. val == 77, 'type attribute')
  call MPI_Type_dup(t, t2, ierr)
  val = 0
  call MPI_Type_get_attr(t2, tkey, val, flag, ierr)
  call check(flag .and. val == 77, 'MPI_TYPE_DUP_FN copies')
  call MPI_Type_free(t2, ierr)
  call check(type_deletes == 1, 'MPI_Type_free deletes')
  call MPI_Type_free(t, ierr)
  call check(type_deletes == 2, 'MPI_Type_free deletes the original')
  call MPI_Type_free_keyval(tkey, ierr)

  ! Window attributes, predefined and the program's.
  call MPI_Win_create(buf, 40_MPI_ADDRESS_KIND, 4, MPI_INFO_NULL, MPI_COMM_WORLD, win, ierr)
  call MPI_Win_get_attr(win, MPI_WIN_SIZE, val, flag, ierr)
  call check(ierr == MPI_SUCCESS .and. flag .and. val == 40, 'MPI_WIN_SIZE')
  call MPI_Win_get_attr(win, MPI_WIN_DISP_UNIT, val, flag, ierr)
  call check(flag .and. val == 4, 'MPI_WIN_DISP_UNIT')
  call MPI_Get_address(buf, addr, ierr)
  call MPI_Win_get_attr(win, MPI_WIN_BASE, val, flag, ierr)
  call check(flag .and. val == addr, 'MPI_WIN_BASE')
  call MPI_Win_get_attr(win, MPI_WIN_CREATE_FLAVOR, val, flag, ierr)
  call check(flag .and. val == MPI_WIN_FLAVOR_CREATE, 'MPI_WIN_CREATE_FLAVOR')
  call MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, win_delete_count, wkey, extra, ierr)
  val = 99
  call MPI_Win_set_attr(win, wkey, val, ierr)
  val = 0
  call MPI_Win_get_attr(win, wkey, val, flag, ierr)
  call check(flag .and. val == 99, 'window attribute')
  call MPI_Win_free(win, ierr)
  call check(win_deletes == 1, 'MPI_Win_free deletes')
  call MPI_Win_free_keyval(wkey, ierr)

  ! Generalized requests with Fortran callbacks.
  call MPI_Grequest_start(greq_query, greq_free, greq_cancel, greq_state(1), req, ierr)
  call check(ierr == MPI_SUCCESS, 'MPI_Grequest_start')
  call MPI_Grequest_complete(req, ierr)
  call MPI_Wait(req, status, ierr)
  call check(ierr == MPI_SUCCESS .and. req == MPI_REQUEST_NULL, 'MPI_Wait on a generalized request')
  call check(queries == 1 .and. frees == 1, 'query and free run once')
  call check(status(MPI_TAG) == 42, 'the query callback fills the status')
  call MPI_Get_count(status, MPI_INTEGER, count, ierr)
  call check(count == 3, 'the status counts what the query callback said')
  call MPI_Grequest_start(greq_query, greq_free, greq_cancel, greq_state(2), req, ierr)
  call MPI_Cancel(req, ierr)
  call check(cancels == 1, 'MPI_Cancel runs the cancel callback')
  call MPI_Grequest_complete(req, ierr)
  call MPI_Wait(req, status, ierr)
  call MPI_Test_cancelled(status, cancelled, ierr)
  call check(cancelled, 'the query callback marks the status cancelled')
  call check(queries == 2 .and. frees == 2, 'query and free run for the second request')

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
