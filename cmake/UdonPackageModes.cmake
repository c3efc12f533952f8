# CPack runs this after installing into its staging tree and before packing that tree
# (CPACK_PRE_BUILD_SCRIPTS): every directory becomes 0755. The install created them under
# the packager's umask (0700 at umask 077, even with CMAKE_INSTALL_DEFAULT_DIRECTORY_PERMISSIONS,
# which mkdir's umask still masks); install() has set the files' modes already.
file(GLOB_RECURSE directories LIST_DIRECTORIES true "${CPACK_TEMPORARY_INSTALL_DIRECTORY}/*")
foreach(path IN LISTS directories)
  if(IS_DIRECTORY "${path}" AND NOT IS_SYMLINK "${path}")
    file(CHMOD "${path}" PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE WORLD_READ
         WORLD_EXECUTE)
  endif()
endforeach()
