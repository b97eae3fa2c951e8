! commcost: Fortran interface to the C ABI (include/commcost.h) through iso_c_binding.
!
! Every function returns an integer(c_int) status, CC_OK (0) on success; cc_error_message()
! gives the message of the last failure on the calling thread. Character arguments are passed
! NUL-terminated: use cc_str('text'). Sizes, counts and process counts are integer(c_int64_t)
! holding C's uint64_t; a negative one is refused (CC_ERR_INVALID_ARGUMENT, naming it).
!
!   gfortran -c commcost.f90 && gfortran prog.f90 commcost.o -L<prefix>/lib -lcommcost_capi
module commcost
  use, intrinsic :: iso_c_binding
  implicit none
  private

  integer(c_int), parameter, public :: CC_OK = 0, CC_ERR_NULL_POINTER = 1, &
       CC_ERR_INVALID_ARGUMENT = 2, CC_ERR_IO = 3, CC_ERR_PARSE = 4, CC_ERR_UNKNOWN_NAME = 5, &
       CC_ERR_UNSUPPORTED = 6, CC_ERR_COLLECTIVE = 7, CC_ERR_BUFFER_TOO_SMALL = 8, &
       CC_ERR_PANIC = 9
  integer(c_int), parameter, public :: CC_FAMILY_OMPI = 0, CC_FAMILY_TEXTBOOK = 1, CC_FAMILY_MPICH = 2
  integer(c_int), parameter, public :: CC_BCAST = 0, CC_ALLREDUCE = 1, CC_REDUCE = 2, &
       CC_ALLGATHER = 3, CC_ALLTOALL = 4, CC_BARRIER = 5, CC_REDUCE_SCATTER = 6, &
       CC_GATHER = 7, CC_SCATTER = 8, CC_SCAN = 9
  integer, parameter, public :: CC_NAME_CAPACITY = 96, CC_SHORT_NAME_CAPACITY = 48

  !> The five per-message quantities, seconds (CcQuantities).
  type, bind(C), public :: cc_quantities_t
     real(c_double) :: p2p, send_overhead, recv_overhead, send_interval, gap
  end type cc_quantities_t

  !> One algorithm with its names in commcost, Open MPI and MPICH (CcAlgorithm).
  type, bind(C), public :: cc_algorithm_t
     real(c_double) :: cost
     integer(c_int32_t) :: ompi_id
     integer(c_int64_t) :: segment
     integer(c_int64_t) :: fanout
     character(kind=c_char) :: name(CC_NAME_CAPACITY)
     character(kind=c_char) :: ompi_name(CC_SHORT_NAME_CAPACITY)
     character(kind=c_char) :: mpich_name(CC_SHORT_NAME_CAPACITY)
  end type cc_algorithm_t

  public :: cc_model_preset, cc_model_load, cc_model_from_json, cc_loggp_new, cc_logp_new, &
       cc_pram_new, cc_mlines_new, cc_plogp_new, cc_loggp_ranges_new, cc_model_free, cc_p2p, &
       cc_p2p_vector, cc_p2p_many, cc_quantities, cc_collective_rank, cc_collective_best, &
       cc_collective_cost, cc_table_build, cc_table_lookup, cc_table_free, cc_str, cc_text, &
       cc_error_message, cc_version_string

  interface
     integer(c_int) function cc_model_preset(name, model) bind(C, name="cc_model_preset")
       import :: c_int, c_char, c_ptr
       character(kind=c_char), intent(in) :: name(*)
       type(c_ptr), intent(out) :: model
     end function cc_model_preset

     integer(c_int) function cc_model_load(path, model) bind(C, name="cc_model_load")
       import :: c_int, c_char, c_ptr
       character(kind=c_char), intent(in) :: path(*)
       type(c_ptr), intent(out) :: model
     end function cc_model_load

     integer(c_int) function cc_model_from_json(json, model) bind(C, name="cc_model_from_json")
       import :: c_int, c_char, c_ptr
       character(kind=c_char), intent(in) :: json(*)
       type(c_ptr), intent(out) :: model
     end function cc_model_from_json

     integer(c_int) function cc_loggp_new(latency, overhead, gap, gap_per_byte, model) &
          bind(C, name="cc_loggp_new")
       import :: c_int, c_double, c_ptr
       real(c_double), value :: latency, overhead, gap, gap_per_byte
       type(c_ptr), intent(out) :: model
     end function cc_loggp_new

     integer(c_int) function cc_logp_new(latency, overhead, gap, word_bytes, model) &
          bind(C, name="cc_logp_new")
       import :: c_int, c_double, c_int64_t, c_ptr
       real(c_double), value :: latency, overhead, gap
       integer(c_int64_t), value :: word_bytes
       type(c_ptr), intent(out) :: model
     end function cc_logp_new

     integer(c_int) function cc_pram_new(unit_cost, model) bind(C, name="cc_pram_new")
       import :: c_int, c_double, c_ptr
       real(c_double), value :: unit_cost
       type(c_ptr), intent(out) :: model
     end function cc_pram_new

     integer(c_int) function cc_mlines_new(per_message, per_byte, per_line, line_bytes, model) &
          bind(C, name="cc_mlines_new")
       import :: c_int, c_double, c_int64_t, c_ptr
       real(c_double), value :: per_message, per_byte, per_line
       integer(c_int64_t), value :: line_bytes
       type(c_ptr), intent(out) :: model
     end function cc_mlines_new

     integer(c_int) function cc_plogp_new(latency, sizes, n, send_overhead, recv_overhead, gap, &
          processors, model) bind(C, name="cc_plogp_new")
       import :: c_int, c_double, c_int64_t, c_size_t, c_ptr
       real(c_double), value :: latency
       integer(c_int64_t), intent(in) :: sizes(*)
       integer(c_size_t), value :: n
       real(c_double), intent(in) :: send_overhead(*), recv_overhead(*), gap(*)
       integer(c_int64_t), value :: processors
       type(c_ptr), intent(out) :: model
     end function cc_plogp_new

     integer(c_int) function cc_loggp_ranges_new(n, starts, latency, overhead, gap, gap_per_byte, &
          rendezvous_above, model) bind(C, name="cc_loggp_ranges_new")
       import :: c_int, c_double, c_int64_t, c_size_t, c_ptr
       integer(c_size_t), value :: n
       integer(c_int64_t), intent(in) :: starts(*)
       real(c_double), intent(in) :: latency(*), overhead(*), gap(*), gap_per_byte(*)
       integer(c_int64_t), value :: rendezvous_above
       type(c_ptr), intent(out) :: model
     end function cc_loggp_ranges_new

     subroutine cc_model_free(model) bind(C, name="cc_model_free")
       import :: c_ptr
       type(c_ptr), value :: model
     end subroutine cc_model_free

     integer(c_int) function cc_p2p(model, bytes, seconds) bind(C, name="cc_p2p")
       import :: c_int, c_ptr, c_int64_t, c_double
       type(c_ptr), value :: model
       integer(c_int64_t), value :: bytes
       real(c_double), intent(out) :: seconds
     end function cc_p2p

     integer(c_int) function cc_p2p_vector(model, count, block_len, stride, seconds) &
          bind(C, name="cc_p2p_vector")
       import :: c_int, c_ptr, c_int64_t, c_double
       type(c_ptr), value :: model
       integer(c_int64_t), value :: count, block_len, stride
       real(c_double), intent(out) :: seconds
     end function cc_p2p_vector

     integer(c_int) function cc_p2p_many(model, sizes, n, seconds) bind(C, name="cc_p2p_many")
       import :: c_int, c_ptr, c_int64_t, c_size_t, c_double
       type(c_ptr), value :: model
       integer(c_int64_t), intent(in) :: sizes(*)
       integer(c_size_t), value :: n
       real(c_double), intent(out) :: seconds(*)
     end function cc_p2p_many

     integer(c_int) function cc_quantities(model, count, block_len, stride, q) &
          bind(C, name="cc_quantities")
       import :: c_int, c_ptr, c_int64_t, cc_quantities_t
       type(c_ptr), value :: model
       integer(c_int64_t), value :: count, block_len, stride
       type(cc_quantities_t), intent(out) :: q
     end function cc_quantities

     integer(c_int) function cc_collective_rank(model, family, collective, processes, bytes, &
          ranked, capacity, count) bind(C, name="cc_collective_rank")
       import :: c_int, c_ptr, c_int64_t, c_size_t, cc_algorithm_t
       type(c_ptr), value :: model
       integer(c_int), value :: family, collective
       integer(c_int64_t), value :: processes, bytes
       type(cc_algorithm_t), intent(out) :: ranked(*)
       integer(c_size_t), value :: capacity
       integer(c_size_t), intent(out) :: count
     end function cc_collective_rank

     integer(c_int) function cc_collective_best(model, family, collective, processes, bytes, &
          best) bind(C, name="cc_collective_best")
       import :: c_int, c_ptr, c_int64_t, cc_algorithm_t
       type(c_ptr), value :: model
       integer(c_int), value :: family, collective
       integer(c_int64_t), value :: processes, bytes
       type(cc_algorithm_t), intent(out) :: best
     end function cc_collective_best

     integer(c_int) function cc_collective_cost(model, family, collective, name, processes, &
          bytes, algorithm) bind(C, name="cc_collective_cost")
       import :: c_int, c_ptr, c_char, c_int64_t, cc_algorithm_t
       type(c_ptr), value :: model
       integer(c_int), value :: family, collective
       character(kind=c_char), intent(in) :: name(*)
       integer(c_int64_t), value :: processes, bytes
       type(cc_algorithm_t), intent(out) :: algorithm
     end function cc_collective_cost

     integer(c_int) function cc_table_build(model, family, collective, processes, n_processes, &
          sizes, n_sizes, table) bind(C, name="cc_table_build")
       import :: c_int, c_ptr, c_int64_t, c_size_t
       type(c_ptr), value :: model
       integer(c_int), value :: family, collective
       integer(c_int64_t), intent(in) :: processes(*)
       integer(c_size_t), value :: n_processes
       integer(c_int64_t), intent(in) :: sizes(*)
       integer(c_size_t), value :: n_sizes
       type(c_ptr), intent(out) :: table
     end function cc_table_build

     integer(c_int) function cc_table_lookup(table, processes, bytes, algorithm) &
          bind(C, name="cc_table_lookup")
       import :: c_int, c_ptr, c_int64_t
       type(c_ptr), value :: table
       integer(c_int64_t), value :: processes, bytes
       type(c_ptr), intent(out) :: algorithm
     end function cc_table_lookup

     subroutine cc_table_free(table) bind(C, name="cc_table_free")
       import :: c_ptr
       type(c_ptr), value :: table
     end subroutine cc_table_free

     type(c_ptr) function cc_last_error() bind(C, name="cc_last_error")
       import :: c_ptr
     end function cc_last_error

     type(c_ptr) function cc_version() bind(C, name="cc_version")
       import :: c_ptr
     end function cc_version

     integer(c_size_t) function c_strlen(s) bind(C, name="strlen")
       import :: c_ptr, c_size_t
       type(c_ptr), value :: s
     end function c_strlen
  end interface

contains

  !> `text` NUL-terminated, for the character arguments.
  function cc_str(text) result(s)
    character(len=*), intent(in) :: text
    character(kind=c_char, len=len_trim(text) + 1) :: s
    s = trim(text) // c_null_char
  end function cc_str

  !> A NUL-terminated character array of a record (name, ompi_name, mpich_name) as a string.
  function cc_text(chars) result(s)
    character(kind=c_char), intent(in) :: chars(:)
    character(len=:), allocatable :: s
    integer :: n
    n = 0
    do while (n < size(chars))
       if (chars(n + 1) == c_null_char) exit
       n = n + 1
    end do
    allocate(character(len=n) :: s)
    s = transfer(chars(1:n), s)
  end function cc_text

  !> The message of the last failure on this thread.
  function cc_error_message() result(s)
    character(len=:), allocatable :: s
    s = c_string(cc_last_error())
  end function cc_error_message

  !> The library's version (cc_version), e.g. 0.1.0.
  function cc_version_string() result(s)
    character(len=:), allocatable :: s
    s = c_string(cc_version())
  end function cc_version_string

  !> A NUL-terminated C string as a Fortran string.
  function c_string(p) result(s)
    type(c_ptr), intent(in) :: p
    character(len=:), allocatable :: s
    character(kind=c_char), pointer :: chars(:)
    integer(c_size_t) :: n
    n = c_strlen(p)
    call c_f_pointer(p, chars, [n])
    allocate(character(len=n) :: s)
    if (n > 0) s = transfer(chars(1:n), s)
  end function c_string
end module commcost
