# The checks of pqscope_add_probes (probes.cmake), run as a script:
#   cmake -DNM=<nm> -DPROBES=<name,name...> -DTARGET=<target> -DPROBED=<probed elf>
#         -DCHECK=defined -DPLAIN=<plain elf> | -DCHECK=called  -P check_probes.cmake
# "defined": every probe is a global symbol of the plain executable (--wrap reaches nothing else).
# "called": every probe's trampoline __wrap_<name> survived the linker's garbage collection, i.e.
# some kept code calls it; otherwise the probed executable is deleted so that it is not used.
string(REPLACE "," ";" probes "${PROBES}")

# The executable's symbols as "<type> <name>" lines.
function(symbols out elf)
  execute_process(COMMAND ${NM} ${elf} OUTPUT_VARIABLE text RESULT_VARIABLE failed)
  if(failed)
    message(FATAL_ERROR "${TARGET}: ${NM} ${elf} failed")
  endif()
  # Addresses off (no "^": CMake anchors it at every match, not only at the start).
  string(REGEX REPLACE "\n[0-9a-fA-F]* *" "\n" text "\n${text}")
  set(${out} "${text}" PARENT_SCOPE)
endfunction()

set(errors "")
if(CHECK STREQUAL "defined")
  symbols(plain ${PLAIN})
  foreach(name IN LISTS probes)
    if("${plain}" MATCHES "\n[TW] ${name}\n")
      continue()
    elseif("${plain}" MATCHES "\n[a-z] ${name}\n")
      string(APPEND errors "  probe ${name}: static (local to its object file), so no call of it "
                           "crosses object files and --wrap cannot reach it\n")
    else()
      string(APPEND errors "  probe ${name}: not defined in ${PLAIN} (no such function, or one the "
                           "linker dropped as unused)\n")
    endif()
  endforeach()
elseif(CHECK STREQUAL "called")
  symbols(probed ${PROBED})
  foreach(name IN LISTS probes)
    if(NOT "${probed}" MATCHES "\n[Tt] __wrap_${name}\n")
      string(APPEND errors "  probe ${name}: never called across object files (only inlined, or "
                           "called inside its own object file), so --wrap never reaches it\n")
    endif()
  endforeach()
  if(errors)
    file(REMOVE ${PROBED})
  endif()
else()
  message(FATAL_ERROR "check_probes.cmake: CHECK must be 'defined' or 'called'")
endif()
if(errors)
  message(FATAL_ERROR "${TARGET}:\n${errors}")
endif()
