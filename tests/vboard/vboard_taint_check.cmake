# Runs the vboard-taint image with --taint and checks its findings for ctest:
#   cmake -DVBOARD=exe -DELF=image -DNM=arm-none-eabi-nm -DOUT=findings.json -P vboard_taint_check.cmake
# Each finding is mapped to the function containing its address (the ELF's function symbols,
# from nm) and must be one of EXPECTED below, which must all occur; the expect_<name> labels of
# taint_cases.S must each carry a finding of their kind at exactly that address. A function not
# listed (the ct_ ones, norm_check, sys_tick_handler, taint_scope) must have no finding.
# Prints one line per failed check ("vboard-taint-check: FAIL ...") and ends with
# "vboard-taint-check: all N checks passed" when there is none.

cmake_minimum_required(VERSION 3.25)

# function:kind:declassified[:region]
set(EXPECTED
  leak_early_exit:branch:false
  leak_sram_lookup:address:false:sram
  leak_flash_lookup:address:false:flash
  leak_division:division:false
  leak_memory:branch:false
  leak_fpu:branch:false
  leak_it:branch:false
  select_it:select:false
  leak_jump:jump:false
  leak_jump:address:false:flash
  leak_flags_overflow:branch:false
  leak_across_ticks:branch:false
  declassified_branch:branch:true
  check_then_branch:branch:true
  publish:branch:true)
# label:kind
set(EXPECTED_AT memory_branch:branch fpu_branch:branch it_block:branch it_select:select jump:jump
                ticks_branch:branch overflow_branch:branch)

set(checks 0)
set(failures 0)
# check(MESSAGE CONDITION...): counts a check, prints MESSAGE if the if() condition is false.
macro(check message)
  math(EXPR checks "${checks} + 1")
  if(NOT (${ARGN}))
    math(EXPR failures "${failures} + 1")
    message("vboard-taint-check: FAIL ${message}")
  endif()
endmacro()

file(REMOVE "${OUT}")
execute_process(
  COMMAND "${VBOARD}" --elf "${ELF}" --uart stdio --max-cycles 2000000000 --stats /dev/stdout
          --taint "${OUT}" --taint-function taint_scope --taint-public-return norm_check
          --taint-public-argument publish:0:16
  INPUT_FILE /dev/null OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
message("${out}${err}vboard-check: exit code ${rc}")
check("the emulator exited with ${rc}" rc EQUAL 0)
check("no SysTick exception during the cases" out MATCHES "TAINT CASES: done, ticks [1-9]")
if(NOT EXISTS "${OUT}")
  message("vboard-taint-check: FAIL no ${OUT}")
  return()
endif()
file(READ "${OUT}" json)

# Function symbols: "address size type name"; the expect_ labels have no size.
execute_process(COMMAND "${NM}" -S --defined-only "${ELF}" OUTPUT_VARIABLE symbols
                RESULT_VARIABLE nm_rc)
check("${NM} failed" nm_rc EQUAL 0)
string(REPLACE "\n" ";" symbols "${symbols}")
set(func_names "")
foreach(line IN LISTS symbols)
  if(line MATCHES "^([0-9a-f]+) ([0-9a-f]+) [tT] ([A-Za-z_][A-Za-z0-9_]*)$")
    math(EXPR start "0x${CMAKE_MATCH_1} & ~1")
    math(EXPR end "${start} + 0x${CMAKE_MATCH_2}")
    set(func_${CMAKE_MATCH_3} "${start};${end}")
    list(APPEND func_names "${CMAKE_MATCH_3}")
  elseif(line MATCHES "^([0-9a-f]+) [tT] expect_([A-Za-z0-9_]+)$")
    math(EXPR label_${CMAKE_MATCH_2} "0x${CMAKE_MATCH_1} & ~1")
  endif()
endforeach()

string(JSON format GET "${json}" format)
string(JSON calls GET "${json}" calls)
string(JSON instructions GET "${json}" instructions)
check("format ${format}" format STREQUAL pqscope-vboard-taint)
check("${calls} calls of taint_scope returned, not 2" calls EQUAL 2)
check("only ${instructions} instructions checked" instructions GREATER 100000)

string(JSON count LENGTH "${json}" findings)
set(found "")
set(found_at "")
set(previous_key "")
if(count GREATER 0)
  math(EXPR last "${count} - 1")
  foreach(i RANGE ${last})
    string(JSON kind GET "${json}" findings ${i} kind)
    string(JSON address GET "${json}" findings ${i} address)
    string(JSON n GET "${json}" findings ${i} count)
    string(JSON declassified GET "${json}" findings ${i} declassified) # ON or OFF
    if(declassified)
      set(declassified true)
    else()
      set(declassified false)
    endif()
    math(EXPR addr "${address}")
    set(where "")
    foreach(name IN LISTS func_names)
      list(GET func_${name} 0 start)
      list(GET func_${name} 1 end)
      if(addr GREATER_EQUAL start AND addr LESS end)
        set(where "${name}")
      endif()
    endforeach()
    set(entry "${where}:${kind}:${declassified}")
    if(kind STREQUAL "address")
      string(JSON region GET "${json}" findings ${i} region)
      string(APPEND entry ":${region}")
    endif()
    message("vboard-taint-check: finding ${address} ${entry} x${n}")
    list(APPEND found "${entry}")
    list(APPEND found_at "${addr}:${kind}")
    check("finding ${address} ${kind} counted ${n} times" n GREATER 0)
    if(entry STREQUAL "leak_division:division:false")
      # once: the second call of taint_scope starts clean
      check("division at ${address} counted ${n} times, not once" n EQUAL 1)
    endif()
    set(key "${addr}:${kind}")
    check("${address} ${kind} twice" NOT key STREQUAL previous_key OR kind STREQUAL address)
    set(previous_key "${key}")
    if(NOT entry IN_LIST EXPECTED)
      message("vboard-taint-check: FAIL unexpected finding ${entry} at ${address}")
      math(EXPR failures "${failures} + 1")
    endif()
  endforeach()
endif()
foreach(entry IN LISTS EXPECTED)
  check("missing finding ${entry}" entry IN_LIST found)
endforeach()
foreach(item IN LISTS EXPECTED_AT)
  string(REPLACE ":" ";" item "${item}")
  list(GET item 0 label)
  list(GET item 1 kind)
  check("no label expect_${label} in the ELF" DEFINED label_${label})
  set(want "${label_${label}}:${kind}")
  check("no ${kind} finding at expect_${label}" want IN_LIST found_at)
endforeach()

if(failures EQUAL 0)
  message("vboard-taint-check: all ${checks} checks passed")
endif()
