# UDON_VERSION_STRING: what `--version` prints after the program name, "0.1.0 (commit
# 0123456789ab)": the project version and the checkout's commit at configure time. Outside
# a git checkout (a source tarball) the commit is UDON_COMMIT when given, else "unknown".
# A new commit re-runs the configure step, so a build never names a commit it is not.
set(UDON_COMMIT "" CACHE STRING "Commit --version names (default: the git checkout's HEAD, else unknown)")

function(udon_git_commit out)
  find_package(Git QUIET)
  if(NOT GIT_FOUND)
    set(${out} "" PARENT_SCOPE)
    return()
  endif()
  execute_process(COMMAND ${GIT_EXECUTABLE} rev-parse --short=12 HEAD
                  WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
                  OUTPUT_VARIABLE commit OUTPUT_STRIP_TRAILING_WHITESPACE
                  RESULT_VARIABLE failed ERROR_QUIET)
  if(failed)
    set(${out} "" PARENT_SCOPE)
    return()
  endif()
  # Reconfigure when HEAD moves: HEAD itself (a checkout), its reflog (every commit, reset
  # or checkout appends to it) and its branch's ref (when the ref is not packed).
  execute_process(COMMAND ${GIT_EXECUTABLE} symbolic-ref -q HEAD WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
                  OUTPUT_VARIABLE branch OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  foreach(name HEAD logs/HEAD ${branch})
    execute_process(COMMAND ${GIT_EXECUTABLE} rev-parse --path-format=absolute --git-path ${name}
                    WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
                    OUTPUT_VARIABLE path OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
    if(path AND EXISTS "${path}")
      set_property(DIRECTORY ${PROJECT_SOURCE_DIR} APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS "${path}")
    endif()
  endforeach()
  set(${out} "${commit}" PARENT_SCOPE)
endfunction()

if(UDON_COMMIT)
  set(udon_commit "${UDON_COMMIT}")
else()
  udon_git_commit(udon_commit)
  if(NOT udon_commit)
    set(udon_commit "unknown")
  endif()
endif()
set(UDON_VERSION_STRING "${PROJECT_VERSION} (commit ${udon_commit})")
