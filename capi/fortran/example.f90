! The Fortran interface in use: a preset, point-to-point times, the best broadcast on 64
! processes with its Open MPI and MPICH names, a decision table looked up, and an error.
!   gfortran commcost.f90 example.f90 -L<prefix>/lib -lcommcost_capi -o example
program example
  use, intrinsic :: iso_c_binding
  use commcost
  implicit none
  type(c_ptr) :: model, table, cell
  type(cc_algorithm_t) :: best, ranked(16)
  type(cc_algorithm_t), pointer :: found
  type(cc_quantities_t) :: q
  real(c_double) :: t, times(3)
  integer(c_int64_t) :: bytes, procs(2), sizes(3)
  integer(c_size_t) :: n
  integer :: i

  print '(a, a)', 'commcost ', cc_version_string()
  call ok(cc_model_preset(cc_str('open-mpi-openib'), model))
  bytes = 1
  do i = 1, 4
     call ok(cc_p2p(model, bytes, t))
     print '(a, i9, a, f10.3, a)', 'p2p(', bytes, ' B) = ', t * 1d6, ' us'
     bytes = bytes * 64
  end do
  call ok(cc_quantities(model, 16_c_int64_t, 8_c_int64_t, 1024_c_int64_t, q))
  print '(a, f8.3, a, f8.3, a)', 'vector 16 x 8 B: p2p ', q%p2p * 1d6, ' us, gap ', q%gap * 1d6, ' us'

  call ok(cc_collective_best(model, CC_FAMILY_OMPI, CC_BCAST, 64_c_int64_t, 65536_c_int64_t, best))
  print '(a, a, a, i0, a, a, a)', 'best bcast, 64 KiB on 64: ', cc_text(best%name), &
       ' (Open MPI ', best%ompi_id, ' ', cc_text(best%ompi_name), ')'
  if (len(cc_text(best%mpich_name)) > 0) print '(a, a)', '  MPICH: ', cc_text(best%mpich_name)

  call ok(cc_collective_rank(model, CC_FAMILY_OMPI, CC_ALLREDUCE, 16_c_int64_t, &
       1048576_c_int64_t, ranked, 16_c_size_t, n))
  print '(a, i0, a, a)', 'allreduce, 1 MiB on 16: ', n, ' algorithms, cheapest ', cc_text(ranked(1)%name)

  sizes = [8_c_int64_t, 65536_c_int64_t, 1048576_c_int64_t]
  call ok(cc_p2p_many(model, sizes, 3_c_size_t, times))
  print '(a, 3f10.3)', 'p2p of 8 B, 64 KiB, 1 MiB (us): ', times * 1d6
  if (cc_p2p(model, -1_c_int64_t, t) /= CC_ERR_INVALID_ARGUMENT) stop 1
  print '(a, a)', 'a negative size is refused: ', cc_error_message()
  call cc_model_free(model)
  call ok(cc_model_from_json(cc_str('{"model": "loggp", "latency": 5e-6, "overhead": 1e-6, ' // &
       '"gap": 2e-6, "gap_per_byte": 1e-9}'), model))
  call ok(cc_p2p(model, 1_c_int64_t, t))
  print '(a, f8.3, a)', 'LogGP from JSON: p2p(1 B) = ', t * 1d6, ' us'
  call cc_model_free(model)
  call ok(cc_loggp_new(5d-6, 1d-6, 2d-6, 1d-9, model))
  call ok(cc_p2p(model, 1_c_int64_t, t))
  print '(a, f8.3, a)', 'LogGP from its parameters: p2p(1 B) = ', t * 1d6, ' us'

  procs = [2_c_int64_t, 64_c_int64_t]
  sizes = [1_c_int64_t, 4096_c_int64_t, 1048576_c_int64_t]
  call ok(cc_table_build(model, CC_FAMILY_TEXTBOOK, CC_ALLREDUCE, procs, 2_c_size_t, sizes, &
       3_c_size_t, table))
  call ok(cc_table_lookup(table, 64_c_int64_t, 2000000_c_int64_t, cell))
  call c_f_pointer(cell, found)
  print '(a, a, a, a)', 'allreduce table, 2 MB on 64: ', cc_text(found%name), ', MPICH ', &
       cc_text(found%mpich_name)
  call cc_table_free(table)

  if (cc_model_preset(cc_str('no-such-preset'), table) /= CC_ERR_UNKNOWN_NAME) stop 1
  print '(a, a)', 'error as expected: ', cc_error_message()
  call cc_model_free(model)
contains
  subroutine ok(rc)
    integer(c_int), intent(in) :: rc
    if (rc /= CC_OK) then
       print '(a, i0, a, a)', 'commcost error ', rc, ': ', cc_error_message()
       stop 1
    end if
  end subroutine ok
end program example
