# Cross toolchain for Cortex-M4F boards (hard float, FPv4-SP), as pqm4 builds its M4 targets.
set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR arm)

find_program(ARM_NONE_EABI_GCC arm-none-eabi-gcc)
if(NOT ARM_NONE_EABI_GCC)
  message(FATAL_ERROR "arm-none-eabi-gcc not found: run the README's setup command (it installs "
                      "gcc-arm-none-eabi and libnewlib-arm-none-eabi)")
endif()
get_filename_component(_arm_bin "${ARM_NONE_EABI_GCC}" DIRECTORY)

# PQSCOPE_COMPILER: which compiler makes C into the images, to ask whether constant-time C stays
# constant-time whatever compiles it. gcc12 is Debian's arm-none-eabi-gcc; the others are wrappers
# (compilers/) that compile C with another compiler and leave assembly and linking to it.
set(PQSCOPE_COMPILERS gcc12 gcc11 clang)
set(PQSCOPE_COMPILER gcc12 CACHE STRING "C compiler of the images: ${PQSCOPE_COMPILERS}")
set_property(CACHE PQSCOPE_COMPILER PROPERTY STRINGS ${PQSCOPE_COMPILERS})
list(APPEND CMAKE_TRY_COMPILE_PLATFORM_VARIABLES PQSCOPE_COMPILER)
if(PQSCOPE_COMPILER STREQUAL "gcc12")
  set(CMAKE_C_COMPILER "${_arm_bin}/arm-none-eabi-gcc")
elseif(PQSCOPE_COMPILER STREQUAL "gcc11")
  set(CMAKE_C_COMPILER "${CMAKE_CURRENT_LIST_DIR}/compilers/gcc11-freestanding")
elseif(PQSCOPE_COMPILER STREQUAL "clang")
  set(CMAKE_C_COMPILER "${CMAKE_CURRENT_LIST_DIR}/compilers/clang-thumbv7em")
else()
  message(FATAL_ERROR "PQSCOPE_COMPILER '${PQSCOPE_COMPILER}' is not one of: ${PQSCOPE_COMPILERS}")
endif()
set(CMAKE_ASM_COMPILER "${_arm_bin}/arm-none-eabi-gcc")
set(CMAKE_OBJCOPY "${_arm_bin}/arm-none-eabi-objcopy" CACHE FILEPATH "")
set(CMAKE_SIZE "${_arm_bin}/arm-none-eabi-size" CACHE FILEPATH "")
# Test programs cannot be linked without a board's startup code and linker script.
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)

set(PQSCOPE_ARCH_FLAGS "-mcpu=cortex-m4 -mthumb -mfloat-abi=hard -mfpu=fpv4-sp-d16")
# -g1: functions and line tables (no variables, so it builds quickly), which leave the code as it
# is and name the source line of each of `pqscope taint`'s findings.
set(CMAKE_C_FLAGS_INIT "${PQSCOPE_ARCH_FLAGS} -ffunction-sections -fdata-sections -g1")
set(CMAKE_ASM_FLAGS_INIT "${PQSCOPE_ARCH_FLAGS}")
set(CMAKE_EXE_LINKER_FLAGS_INIT "${PQSCOPE_ARCH_FLAGS} -nostartfiles --specs=nano.specs --specs=nosys.specs -Wl,--gc-sections")

set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
