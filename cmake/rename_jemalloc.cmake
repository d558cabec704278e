# Copies jemalloc's static PIC archive with its public entry points renamed
# to quiver_je_<name> (see CMakeLists.txt for why). Inputs: ARCHIVE, OUT, OBJCOPY.
set(_syms malloc calloc realloc free posix_memalign aligned_alloc memalign valloc
    malloc_usable_size mallocx rallocx xallocx sallocx dallocx sdallocx nallocx
    mallctl mallctlnametomib mallctlbymib malloc_stats_print malloc_conf
    malloc_conf_2_conf_harder malloc_message pvalloc
    _Znwm _Znam _ZnwmRKSt9nothrow_t _ZnamRKSt9nothrow_t _ZnwmSt11align_val_t
    _ZnamSt11align_val_t _ZnwmSt11align_val_tRKSt9nothrow_t _ZnamSt11align_val_tRKSt9nothrow_t
    _ZdlPv _ZdaPv _ZdlPvm _ZdaPvm _ZdlPvRKSt9nothrow_t _ZdaPvRKSt9nothrow_t
    _ZdlPvSt11align_val_t _ZdaPvSt11align_val_t _ZdlPvmSt11align_val_t _ZdaPvmSt11align_val_t
    _ZdlPvSt11align_val_tRKSt9nothrow_t _ZdaPvSt11align_val_tRKSt9nothrow_t)
set(_map "")
foreach(s ${_syms})
  string(APPEND _map "${s} quiver_je_${s}\n")
endforeach()
file(WRITE ${OUT}.map "${_map}")
execute_process(COMMAND ${OBJCOPY} --redefine-syms=${OUT}.map ${ARCHIVE} ${OUT}
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "objcopy failed on ${ARCHIVE}")
endif()
