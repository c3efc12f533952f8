# One small helper per target kind. Components are OBJECT libraries that together form
# libudonmcp; tests link only the closure of the components they exercise, so a broken
# component never blocks the tests of one that does not depend on it.

function(udon_compile_options target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow
                         -Wnon-virtual-dtor -Wimplicit-fallthrough)
  if(UDON_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
  if(UDON_SANITIZE)
    target_compile_options(${target} PRIVATE -fsanitize=address,undefined -fno-omit-frame-pointer
                           -fno-sanitize-recover=undefined)
    target_link_options(${target} PRIVATE -fsanitize=address,undefined)
  endif()
endfunction()

# udon_component(NAME SOURCES ... [DEPS component...] [LIBS imported-target...])
function(udon_component name)
  cmake_parse_arguments(C "" "" "SOURCES;DEPS;LIBS" ${ARGN})
  add_library(udon_${name} OBJECT ${C_SOURCES})
  target_include_directories(udon_${name} PUBLIC ${PROJECT_SOURCE_DIR}/src)
  set(links ${C_LIBS})
  foreach(dep IN LISTS C_DEPS)
    list(APPEND links udon_${dep})
  endforeach()
  if(links)
    target_link_libraries(udon_${name} PUBLIC ${links})
  endif()
  udon_compile_options(udon_${name})
  set_property(GLOBAL APPEND PROPERTY UDON_COMPONENTS ${name})
  set_property(GLOBAL PROPERTY UDON_DEPS_${name} ${C_DEPS})
endfunction()

# Components NAMES plus everything they depend on, as udon_<name> targets.
function(udon_closure out)
  set(pending ${ARGN})
  set(seen "")
  while(pending)
    list(POP_FRONT pending name)
    if(NOT name IN_LIST seen)
      list(APPEND seen ${name})
      get_property(deps GLOBAL PROPERTY UDON_DEPS_${name})
      list(APPEND pending ${deps})
    endif()
  endwhile()
  list(TRANSFORM seen PREPEND udon_)
  set(${out} ${seen} PARENT_SCOPE)
endfunction()

# The library: every component's objects in one archive.
function(udon_library)
  get_property(components GLOBAL PROPERTY UDON_COMPONENTS)
  udon_closure(targets ${components})
  add_library(udonmcp STATIC)
  target_link_libraries(udonmcp PUBLIC ${targets})
endfunction()

# udon_executable(NAME SOURCES ... [COMPONENTS ...] [LIBS ...])
function(udon_executable name)
  cmake_parse_arguments(E "" "" "SOURCES;COMPONENTS;LIBS" ${ARGN})
  add_executable(${name} ${E_SOURCES})
  udon_closure(targets ${E_COMPONENTS})
  target_link_libraries(${name} PRIVATE ${targets} ${E_LIBS})
  udon_compile_options(${name})
endfunction()

# udon_test(NAME SOURCES ... [COMPONENTS ...] [LIBS ...] [LABELS ...])
# A GoogleTest binary; each TEST becomes a CTest test. Tests find shared test data through
# the UDON_SHARED_DIR and build-tree locations through UDON_BINARY_DIR.
function(udon_test name)
  cmake_parse_arguments(T "" "" "SOURCES;COMPONENTS;LIBS;LABELS" ${ARGN})
  if(NOT UDON_BUILD_TESTS)
    return()
  endif()
  udon_executable(${name} SOURCES ${T_SOURCES} COMPONENTS ${T_COMPONENTS}
                  LIBS ${T_LIBS} GTest::gtest GTest::gtest_main GTest::gmock)
  target_compile_definitions(${name} PRIVATE
    UDON_SHARED_DIR="${UDON_SHARED_DIR}"
    UDON_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
    UDON_BINARY_DIR="${PROJECT_BINARY_DIR}")
  if(NOT T_LABELS)
    set(T_LABELS unit)
  endif()
  gtest_discover_tests(${name} DISCOVERY_TIMEOUT 60 PROPERTIES LABELS "${T_LABELS}"
                       TIMEOUT 600)
endfunction()

# udon_benchmark(NAME SOURCES ... [COMPONENTS ...]): Google Benchmark binaries, never tests.
function(udon_benchmark name)
  cmake_parse_arguments(B "" "" "SOURCES;COMPONENTS;LIBS" ${ARGN})
  udon_executable(${name} SOURCES ${B_SOURCES} COMPONENTS ${B_COMPONENTS}
                  LIBS ${B_LIBS} benchmark::benchmark)
endfunction()
