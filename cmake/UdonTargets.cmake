# One small helper per target kind. Components are OBJECT libraries that together form
# libudonmcp; tests link only the closure of the components they exercise, so a broken
# component never blocks the tests of one that does not depend on it.

function(udon_compile_options target)
  target_compile_options(${target} PRIVATE -Wall -Wextra -Wpedantic -Wshadow
                         -Wnon-virtual-dtor -Wimplicit-fallthrough)
  if(UDON_WERROR)
    target_compile_options(${target} PRIVATE -Werror)
  endif()
  if(UDON_SANITIZE OR UDON_FUZZ)
    target_compile_options(${target} PRIVATE -fsanitize=address,undefined -fno-omit-frame-pointer
                           -fno-sanitize-recover=undefined)
    target_link_options(${target} PRIVATE -fsanitize=address,undefined)
  endif()
  if(UDON_FUZZ)
    # Coverage instrumentation for libFuzzer everywhere; only fuzzers link its main.
    target_compile_options(${target} PRIVATE -fsanitize=fuzzer-no-link)
  endif()
  if(UDON_TSAN)
    target_compile_options(${target} PRIVATE -fsanitize=thread -fno-omit-frame-pointer)
    target_link_options(${target} PRIVATE -fsanitize=thread)
  endif()
endfunction()

# With UDON_UNITY_BUILD, TARGET compiles its sources in unity batches (CMake's UNITY_BUILD).
# A source that cannot share a batch sets SKIP_UNITY_BUILD_INCLUSION, with a comment why.
function(udon_unity_build target)
  if(UDON_UNITY_BUILD)
    set_target_properties(${target} PROPERTIES UNITY_BUILD ON UNITY_BUILD_BATCH_SIZE ${UDON_UNITY_BATCH_SIZE})
  endif()
endfunction()

# An OBJECT library udon_NAME whose closure (udon_closure) knows its DEPS.
function(udon_object_library name)
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
  udon_unity_build(udon_${name})
  set_property(GLOBAL PROPERTY UDON_DEPS_${name} ${C_DEPS})
endfunction()

# udon_component(NAME SOURCES ... [DEPS component...] [LIBS imported-target...])
function(udon_component name)
  udon_object_library(${name} ${ARGN})
  set_property(GLOBAL APPEND PROPERTY UDON_COMPONENTS ${name})
endfunction()

# udon_test_component(NAME SOURCES ... [DEPS component...] [LIBS ...]): test doubles that
# tests, fuzzers and benchmarks link like a component (COMPONENTS NAME). No part of
# libudonmcp, and udon_check_layers keeps every component from depending on one, so no
# production binary contains them.
function(udon_test_component name)
  udon_object_library(${name} ${ARGN})
  set_property(GLOBAL APPEND PROPERTY UDON_TEST_COMPONENTS ${name})
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

# udon_check_layers(): fails the configure when a component's closure reaches what its
# layer must not, so that one wrong DEPS line cannot undo the seams (docs/architecture.md):
# - only cli and the gateway (`serve`) reach mcp_server, and only cli reaches the gateway:
#   the server framework is for front ends, never for the libraries below them;
# - only cli reaches workbench (the browser front end), and workbench reaches only the
#   static layers: it reads and writes manifests, it never talks to an MCP server;
# - the server side (mcp_protocol, mcp_server) reaches no mcp_client: a server links no
#   libcurl;
# - base depends on no other component; the static layers (base, json, schema, manifest)
#   reach no MCP or network code;
# - only cli and the gateway reach telemetry, and telemetry reaches no server framework;
# - nothing reaches a test component (udon_test_component).
function(udon_check_layers)
  get_property(components GLOBAL PROPERTY UDON_COMPONENTS)
  get_property(test_components GLOBAL PROPERTY UDON_TEST_COMPONENTS)
  foreach(name IN LISTS components)
    udon_closure(closure ${name})
    list(REMOVE_ITEM closure udon_${name})
    set(forbidden ${test_components})
    if(NOT name MATCHES "^(cli|gateway)$")
      list(APPEND forbidden mcp_server)
    endif()
    if(NOT name STREQUAL "cli")
      list(APPEND forbidden workbench gateway resource_auth)
    endif()
    if(NOT name MATCHES "^(cli|gateway)$")
      list(APPEND forbidden telemetry)
    endif()
    if(name STREQUAL "workbench")
      list(APPEND forbidden mcp_protocol mcp_client mcp_server catalog capture gate state_pg uws trust workflow
           evidence)
    endif()
    if(name MATCHES "^(mcp_protocol|mcp_server)$")
      list(APPEND forbidden mcp_client)
    endif()
    # The ground floor stands on nothing of ours.
    if(name STREQUAL "base")
      get_property(deps GLOBAL PROPERTY UDON_DEPS_base)
      if(deps)
        message(FATAL_ERROR "component base must not depend on ${deps} (docs/architecture.md)")
      endif()
    endif()
    if(name MATCHES "^(base|json|schema|manifest)$")
      list(APPEND forbidden mcp_protocol mcp_client catalog capture)
    endif()
    # The static layer (validate, analyze): documents and content trust, never the gate,
    # the network or a state store.
    if(name MATCHES "^(uws|trust)$")
      list(APPEND forbidden mcp_protocol mcp_client catalog capture gate state_pg workflow)
    endif()
    # The shared state store and the evidence report sit beside the gate, not above it.
    if(name MATCHES "^(gate|evidence)$")
      list(APPEND forbidden state_pg workflow uws trust)
    endif()
    foreach(reached IN LISTS forbidden)
      if(udon_${reached} IN_LIST closure)
        message(FATAL_ERROR "component ${name} must not depend on ${reached} (docs/architecture.md)")
      endif()
    endforeach()
  endforeach()
endfunction()

# udon_write_graph(FILE): one "component dependency" line per DEPS edge, for the test that
# keeps docs/architecture.md's picture equal to the build (tests/architecture/check_docs.py).
function(udon_write_graph file)
  get_property(components GLOBAL PROPERTY UDON_COMPONENTS)
  set(lines "")
  foreach(name IN LISTS components)
    get_property(deps GLOBAL PROPERTY UDON_DEPS_${name})
    foreach(dep IN LISTS deps)
      string(APPEND lines "${name} ${dep}\n")
    endforeach()
  endforeach()
  file(WRITE ${file} "${lines}")
endfunction()

# udon_executable(NAME SOURCES ... [COMPONENTS ...] [LIBS ...])
function(udon_executable name)
  cmake_parse_arguments(E "" "" "SOURCES;COMPONENTS;LIBS" ${ARGN})
  add_executable(${name} ${E_SOURCES})
  udon_closure(targets ${E_COMPONENTS})
  target_link_libraries(${name} PRIVATE ${targets} ${E_LIBS})
  udon_compile_options(${name})
endfunction()

# udon_syntax_check(NAME SOURCES ... [COMPONENTS ...] [LIBS ...]): an OBJECT library NAME
# whose sources compile like udon_executable's but with -fsyntax-only (cmake/syntax_only.sh):
# the compiler still checks every warning, generates no code, and nothing is linked.
function(udon_syntax_check name)
  cmake_parse_arguments(S "" "" "SOURCES;COMPONENTS;LIBS" ${ARGN})
  add_library(${name} OBJECT ${S_SOURCES})
  udon_closure(targets ${S_COMPONENTS})
  target_link_libraries(${name} PRIVATE ${targets} ${S_LIBS})
  udon_compile_options(${name})
  set_target_properties(${name} PROPERTIES CXX_COMPILER_LAUNCHER ${PROJECT_SOURCE_DIR}/cmake/syntax_only.sh)
endfunction()

# udon_test(NAME SOURCES ... [COMPONENTS ...] [LIBS ...] [LABELS ...] [TESTDATA FILTER])
# A GoogleTest binary; each TEST becomes a CTest test. Tests find the project's sources and
# build-tree locations through UDON_SOURCE_DIR and UDON_BINARY_DIR, and the external test
# suites through tests/support/external_testdata.h. The tests that match the GoogleTest
# FILTER read those suites: they need the CTest fixture `testdata` (scripts/testdata.sh),
# so without the data they are not run and that fixture's one line says why.
function(udon_test name)
  cmake_parse_arguments(T "" "TESTDATA" "SOURCES;COMPONENTS;LIBS;LABELS" ${ARGN})
  if(NOT UDON_BUILD_TESTS)
    return()
  endif()
  if(NOT T_LABELS)
    set(T_LABELS unit)
  endif()
  set(test_libs ${T_LIBS} GTest::gtest GTest::gtest_main GTest::gmock)
  if(UDON_UNIT_TESTS_ONLY AND NOT "unit" IN_LIST T_LABELS)
    udon_syntax_check(${name} SOURCES ${T_SOURCES} COMPONENTS ${T_COMPONENTS} LIBS ${test_libs})
  else()
    udon_executable(${name} SOURCES ${T_SOURCES} COMPONENTS ${T_COMPONENTS} LIBS ${test_libs})
  endif()
  target_include_directories(${name} PRIVATE ${PROJECT_SOURCE_DIR}/tests/support)
  target_compile_definitions(${name} PRIVATE
    UDON_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
    UDON_BINARY_DIR="${PROJECT_BINARY_DIR}")
  udon_unity_build(${name})
  if(UDON_UNIT_TESTS_ONLY AND NOT "unit" IN_LIST T_LABELS)
    return()
  endif()
  if(NOT T_TESTDATA STREQUAL "*")
    set(others "*")
    if(T_TESTDATA)
      set(others "-${T_TESTDATA}")
    endif()
    gtest_discover_tests(${name} DISCOVERY_TIMEOUT 60 TEST_FILTER "${others}"
                         PROPERTIES LABELS "${T_LABELS}" TIMEOUT 600)
  endif()
  if(T_TESTDATA)
    gtest_discover_tests(${name} DISCOVERY_TIMEOUT 60 TEST_FILTER "${T_TESTDATA}"
                         PROPERTIES LABELS "${T_LABELS}" TIMEOUT 600 FIXTURES_REQUIRED testdata)
  endif()
endfunction()

# udon_test_helpers(NAME SOURCES ... [COMPONENTS ...] [LIBS ...] [LABELS ...]): sources that
# several test targets share (clients, fixtures), compiled once into the OBJECT library NAME
# that those targets name in LIBS. COMPONENTS must be in each such target's own COMPONENTS
# closure (only directly linked object libraries give their objects). LABELS are those of
# the tests that use them: under UDON_UNIT_TESTS_ONLY, helpers of no unit test are only
# syntax-checked, like their tests.
function(udon_test_helpers name)
  cmake_parse_arguments(H "" "" "SOURCES;COMPONENTS;LIBS;LABELS" ${ARGN})
  if(NOT UDON_BUILD_TESTS)
    return()
  endif()
  if(NOT H_LABELS)
    set(H_LABELS unit)
  endif()
  if(UDON_UNIT_TESTS_ONLY AND NOT "unit" IN_LIST H_LABELS)
    udon_syntax_check(${name} SOURCES ${H_SOURCES} COMPONENTS ${H_COMPONENTS} LIBS ${H_LIBS} GTest::gtest)
  else()
    add_library(${name} OBJECT ${H_SOURCES})
    udon_closure(targets ${H_COMPONENTS})
    target_link_libraries(${name} PRIVATE ${targets} ${H_LIBS} GTest::gtest)
    udon_compile_options(${name})
  endif()
  target_include_directories(${name} PUBLIC ${CMAKE_CURRENT_SOURCE_DIR} ${PROJECT_SOURCE_DIR}/tests/support)
  target_compile_definitions(${name} PRIVATE
    UDON_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
    UDON_BINARY_DIR="${PROJECT_BINARY_DIR}")
  udon_unity_build(${name})
endfunction()

# udon_benchmark(NAME SOURCES ... [COMPONENTS ...]): Google Benchmark binaries, never tests.
function(udon_benchmark name)
  cmake_parse_arguments(B "" "" "SOURCES;COMPONENTS;LIBS" ${ARGN})
  udon_executable(${name} SOURCES ${B_SOURCES} COMPONENTS ${B_COMPONENTS}
                  LIBS ${B_LIBS} benchmark::benchmark)
endfunction()

# udon_fuzzer(NAME SOURCES ... [COMPONENTS ...])
# SOURCES define LLVMFuzzerTestOneInput. With UDON_FUZZ, NAME_fuzzer is the libFuzzer
# binary. Always (any compiler), NAME_replay runs the same code over files and directories
# through fuzz/replay_main.cc, and the unit test NAME_fuzz_replay feeds it the committed
# regressions (fuzz/regressions/NAME/), the committed seeds (fuzz/seeds/NAME/) and the seeds
# fuzz/make_seeds.py generates from the test data: every crash ever found stays a test.
function(udon_fuzzer name)
  cmake_parse_arguments(F "" "" "SOURCES;COMPONENTS" ${ARGN})
  # The fuzz target's code, compiled once for both binaries.
  add_library(${name}_fuzz_target OBJECT ${F_SOURCES})
  udon_closure(targets ${F_COMPONENTS})
  target_link_libraries(${name}_fuzz_target PRIVATE ${targets})
  target_include_directories(${name}_fuzz_target PRIVATE ${PROJECT_SOURCE_DIR})
  udon_compile_options(${name}_fuzz_target)
  if(UDON_FUZZ)
    udon_executable(${name}_fuzzer SOURCES $<TARGET_OBJECTS:${name}_fuzz_target> COMPONENTS ${F_COMPONENTS})
    target_link_options(${name}_fuzzer PRIVATE -fsanitize=fuzzer)
  endif()
  udon_executable(${name}_replay SOURCES $<TARGET_OBJECTS:${name}_fuzz_target> ${PROJECT_SOURCE_DIR}/fuzz/replay_main.cc
                  COMPONENTS ${F_COMPONENTS})
  target_include_directories(${name}_replay PRIVATE ${PROJECT_SOURCE_DIR})
  if(NOT UDON_BUILD_TESTS)
    return()
  endif()
  add_test(NAME ${name}_fuzz_replay
           COMMAND ${name}_replay ${PROJECT_SOURCE_DIR}/fuzz/regressions/${name}
                   ${PROJECT_SOURCE_DIR}/fuzz/seeds/${name} ${PROJECT_BINARY_DIR}/fuzz/seeds/${name})
  set_tests_properties(${name}_fuzz_replay PROPERTIES LABELS unit TIMEOUT 600)
  # Without Python the replay still covers the committed regressions and seeds.
  find_package(Python3 COMPONENTS Interpreter QUIET)
  if(Python3_Interpreter_FOUND)
    add_test(NAME ${name}_fuzz_seeds
             COMMAND ${Python3_EXECUTABLE} ${PROJECT_SOURCE_DIR}/fuzz/make_seeds.py
                     --testdata-dir ${PROJECT_BINARY_DIR}/testdata --out ${PROJECT_BINARY_DIR}/fuzz/seeds ${name})
    set_tests_properties(${name}_fuzz_seeds PROPERTIES LABELS unit
                         FIXTURES_SETUP ${name}_fuzz_seeds FIXTURES_REQUIRED testdata)
    set_tests_properties(${name}_fuzz_replay PROPERTIES FIXTURES_REQUIRED ${name}_fuzz_seeds)
  endif()
endfunction()

# udon_command_reference(PROGRAM [COMPLETION]): the target PROGRAM-reference has the built
# PROGRAM render its man pages from its own command tree (`--write-reference`,
# reference/reference.h) into reference/PROGRAM/ of the build tree, compressed with
# `gzip -9n`; they install into man1, and with COMPLETION its bash completion too.
function(udon_command_reference program)
  cmake_parse_arguments(R "COMPLETION" "" "" ${ARGN})
  set(dir ${PROJECT_BINARY_DIR}/reference/${program})
  add_custom_command(OUTPUT ${dir}/stamp
    COMMAND ${CMAKE_COMMAND} -E rm -rf ${dir}/man1 ${dir}/bash-completion
    COMMAND ${program} --write-reference ${dir} ${UDON_VERSION_STRING}
    COMMAND ${CMAKE_COMMAND} -DDIR=${dir}/man1 -P ${PROJECT_SOURCE_DIR}/cmake/UdonGzipPages.cmake
    COMMAND ${CMAKE_COMMAND} -E touch ${dir}/stamp
    DEPENDS ${program}
    COMMENT "Rendering ${program}'s man pages"
    VERBATIM)
  add_custom_target(${program}-reference ALL DEPENDS ${dir}/stamp)
  install(DIRECTORY ${dir}/man1 DESTINATION ${CMAKE_INSTALL_MANDIR})
  if(R_COMPLETION)
    install(FILES ${dir}/bash-completion/${program} DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions)
  endif()
endfunction()
