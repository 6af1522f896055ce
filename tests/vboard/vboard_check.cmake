# Runs one image on the emulator for ctest:
#   cmake -DVBOARD=exe -DELF=image -DMODE=run|twice [-DINPUT=file] [-DARGS='options'] -P vboard_check.cmake
#   run:   prints the emulator's stdout and stderr, then "vboard-check: exit code N"
#   twice: runs it twice and prints "vboard-check: identical" or "vboard-check: different"
#          comparing stdout (which carries the cycle counts) byte for byte
#   INPUT is the UART input (default: none); ARGS, one string, are extra emulator options.
if(NOT INPUT)
  set(INPUT /dev/null)
endif()
if(NOT ARGS)
  set(ARGS "--max-cycles 2000000000")
endif()
separate_arguments(ARGS UNIX_COMMAND "${ARGS}")
set(cmd "${VBOARD}" --elf "${ELF}" --uart stdio ${ARGS})
execute_process(COMMAND ${cmd} INPUT_FILE "${INPUT}" OUTPUT_VARIABLE out1 ERROR_VARIABLE err1
                RESULT_VARIABLE rc1)
message("${out1}${err1}vboard-check: exit code ${rc1}")
if(MODE STREQUAL "twice")
  execute_process(COMMAND ${cmd} INPUT_FILE "${INPUT}" OUTPUT_VARIABLE out2 ERROR_VARIABLE err2
                  RESULT_VARIABLE rc2)
  if(out1 STREQUAL out2 AND rc1 EQUAL 0 AND rc2 EQUAL 0 AND NOT out1 STREQUAL "")
    message("vboard-check: identical")
  else()
    message("vboard-check: different (exit codes ${rc1} ${rc2})\n${out2}${err2}")
  endif()
endif()
