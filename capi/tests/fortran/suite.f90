! Every function of the Fortran module, printed for capi/tests/fortran_suite.rs to compare bit
! for bit with Rust: one line per call, `KEY rc value...`, times as the hex of their bits.
!   suite MODEL_FILE
program suite
  use, intrinsic :: iso_c_binding
  use commcost
  implicit none
  type(c_ptr) :: model, other, table, cell
  type(cc_algorithm_t) :: a, ranked(32)
  type(cc_algorithm_t), pointer :: found
  type(cc_quantities_t) :: q
  real(c_double) :: t, times(3)
  integer(c_int64_t) :: procs(2), sizes(3)
  integer(c_size_t) :: n
  integer(c_int) :: rc
  character(len=4096) :: path

  call get_command_argument(1, path)
  print '(a, 1x, a)', 'VERSION', cc_version_string()
  rc = cc_model_preset(cc_str('open-mpi-openib'), model)
  print '(a, 1x, i0)', 'PRESET', rc
  rc = cc_p2p(model, 1024_c_int64_t, t)
  call bits('P2P', rc, t)
  rc = cc_p2p_vector(model, 16_c_int64_t, 8_c_int64_t, 1024_c_int64_t, t)
  call bits('P2P_VECTOR', rc, t)
  sizes = [8_c_int64_t, 65536_c_int64_t, 1048576_c_int64_t]
  rc = cc_p2p_many(model, sizes, 3_c_size_t, times)
  call bits('P2P_MANY_1', rc, times(1))
  call bits('P2P_MANY_2', rc, times(2))
  call bits('P2P_MANY_3', rc, times(3))
  rc = cc_quantities(model, 16_c_int64_t, 8_c_int64_t, 1024_c_int64_t, q)
  call bits('Q_P2P', rc, q%p2p)
  call bits('Q_SEND_OVERHEAD', rc, q%send_overhead)
  call bits('Q_RECV_OVERHEAD', rc, q%recv_overhead)
  call bits('Q_SEND_INTERVAL', rc, q%send_interval)
  call bits('Q_GAP', rc, q%gap)
  rc = cc_collective_rank(model, CC_FAMILY_OMPI, CC_ALLREDUCE, 16_c_int64_t, 1048576_c_int64_t, &
       ranked, 32_c_size_t, n)
  print '(a, 1x, i0, 1x, i0)', 'RANK_COUNT', rc, n
  call algorithm('RANK_FIRST', rc, ranked(1))
  call algorithm('RANK_LAST', rc, ranked(n))
  rc = cc_collective_best(model, CC_FAMILY_OMPI, CC_BCAST, 64_c_int64_t, 65536_c_int64_t, a)
  call algorithm('BEST', rc, a)
  rc = cc_collective_cost(model, CC_FAMILY_OMPI, CC_BCAST, cc_str('chain:segment=8192,fanout=4'), &
       64_c_int64_t, 65536_c_int64_t, a)
  call algorithm('COST', rc, a)
  procs = [2_c_int64_t, 64_c_int64_t]
  sizes = [1_c_int64_t, 4096_c_int64_t, 1048576_c_int64_t]
  rc = cc_table_build(model, CC_FAMILY_TEXTBOOK, CC_ALLREDUCE, procs, 2_c_size_t, sizes, &
       3_c_size_t, table)
  print '(a, 1x, i0)', 'TABLE_BUILD', rc
  rc = cc_table_lookup(table, 64_c_int64_t, 2000000_c_int64_t, cell)
  call c_f_pointer(cell, found)
  call algorithm('LOOKUP', rc, found)
  call cc_table_free(table)
  call cc_model_free(model)

  rc = cc_loggp_new(5d-6, 1d-6, 2d-6, 1d-9, model)
  call p2p_of('LOGGP_NEW', rc, model, 1024_c_int64_t)
  rc = cc_logp_new(5d-6, 1d-6, 2d-6, 8_c_int64_t, other)
  call p2p_of('LOGP_NEW', rc, other, 20_c_int64_t)
  call cc_model_free(other)
  rc = cc_pram_new(3d-6, other)
  call p2p_of('PRAM_NEW', rc, other, 1024_c_int64_t)
  call cc_model_free(other)
  rc = cc_mlines_new(1d-5, 1d-9, 2d-8, 64_c_int64_t, other)
  call p2p_of('MLINES_NEW', rc, other, 8000_c_int64_t)
  call cc_model_free(other)
  sizes = [1_c_int64_t, 1024_c_int64_t, 65536_c_int64_t]
  rc = cc_plogp_new(3d-6, sizes, 3_c_size_t, [1d-6, 2d-6, 3d-5], [1.5d-6, 2.5d-6, 2.5d-5], &
       [2d-6, 4d-6, 5d-5], 2_c_int64_t, other)
  call p2p_of('PLOGP_NEW', rc, other, 4096_c_int64_t)
  call cc_model_free(other)
  rc = cc_loggp_ranges_new(2_c_size_t, [1_c_int64_t, 12289_c_int64_t], [0d0, 0d0], &
       [2.98d-6, 2.98d-6], [5.14d-6, 2.139d-5], [7.3d-10, 1.03d-9], 12288_c_int64_t, other)
  call p2p_of('RANGES_NEW_1', rc, other, 1024_c_int64_t)
  call p2p_of('RANGES_NEW_2', rc, other, 65536_c_int64_t)
  call cc_model_free(other)
  rc = cc_loggp_ranges_new(2_c_size_t, [1_c_int64_t, 1_c_int64_t], [0d0, 0d0], &
       [2.98d-6, 2.98d-6], [5.14d-6, 2.139d-5], [7.3d-10, 1.03d-9], 0_c_int64_t, other)
  print '(a, 1x, i0, 1x, a)', 'ERR_RANGES', rc, cc_error_message()
  rc = cc_plogp_new(3d-6, sizes, 3_c_size_t, [1d-6, 2d-6, 3d-5], [1.5d-6, 2.5d-6, 2.5d-5], &
       [2d-6, -4d-6, 5d-5], 2_c_int64_t, other)
  print '(a, 1x, i0, 1x, a)', 'ERR_PLOGP', rc, cc_error_message()
  rc = cc_model_from_json(cc_str('{"model": "loggp", "latency": 5e-6, "overhead": 1e-6, ' // &
       '"gap": 2e-6, "gap_per_byte": 1e-9}'), other)
  call p2p_of('FROM_JSON', rc, other, 1024_c_int64_t)
  call cc_model_free(other)
  rc = cc_model_load(cc_str(trim(path)), other)
  call p2p_of('LOAD', rc, other, 1024_c_int64_t)
  call cc_model_free(other)
  call cc_model_free(model)

  ! errors: the code, and the message of cc_last_error through cc_error_message
  rc = cc_model_preset(cc_str('no-such-preset'), model)
  print '(a, 1x, i0, 1x, a)', 'ERR_PRESET', rc, cc_error_message()
  rc = cc_model_load(cc_str(trim(path) // '.missing'), model)
  print '(a, 1x, i0)', 'ERR_LOAD', rc
  rc = cc_loggp_new(-1d0, 1d-6, 2d-6, 1d-9, model)
  print '(a, 1x, i0, 1x, a)', 'ERR_LOGGP', rc, cc_error_message()
  rc = cc_p2p(c_null_ptr, 8_c_int64_t, t)
  print '(a, 1x, i0)', 'ERR_NULL', rc
  rc = cc_model_preset(cc_str('nmpi-sci'), model)
  rc = cc_p2p(model, -1_c_int64_t, t)
  print '(a, 1x, i0, 1x, a)', 'ERR_NEGATIVE', rc, cc_error_message()
  call cc_model_free(model)
  print '(a)', 'END'
contains
  subroutine bits(key, rc, x)
    character(len=*), intent(in) :: key
    integer(c_int), intent(in) :: rc
    real(c_double), intent(in) :: x
    print '(a, 1x, i0, 1x, z16.16)', key, rc, transfer(x, 0_c_int64_t)
  end subroutine bits

  subroutine algorithm(key, rc, x)
    character(len=*), intent(in) :: key
    integer(c_int), intent(in) :: rc
    type(cc_algorithm_t), intent(in) :: x
    print '(a, 1x, i0, 1x, z16.16, 1x, i0, 1x, i0, 1x, i0, 1x, a, 1x, a, 1x, a)', key, rc, &
         transfer(x%cost, 0_c_int64_t), x%ompi_id, x%segment, x%fanout, cc_text(x%name), &
         '[' // cc_text(x%ompi_name) // ']', '[' // cc_text(x%mpich_name) // ']'
  end subroutine algorithm

  subroutine p2p_of(key, rc, m, bytes)
    character(len=*), intent(in) :: key
    integer(c_int), intent(in) :: rc
    type(c_ptr), intent(in) :: m
    integer(c_int64_t), intent(in) :: bytes
    real(c_double) :: x
    integer(c_int) :: rc2
    rc2 = CC_OK
    x = 0
    if (rc == CC_OK) rc2 = cc_p2p(m, bytes, x)
    call bits(key, max(rc, rc2), x)
  end subroutine p2p_of
end program suite
