# What `cmake --install` puts under CMAKE_INSTALL_PREFIX besides the binaries, their man
# pages and bash completion (src/cli, src/demo_server), and the Debian package CPack builds
# from that tree (scripts/package.sh). The layout is contract section 7.22.
install(FILES ${PROJECT_SOURCE_DIR}/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
# docs/ and examples/ keep their places beside the README, so its links work installed.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/docs)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/examples/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples)
# The manifest and binding schemas udon-mcp compiles in, for other tools to validate with.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/schemas/ DESTINATION ${CMAKE_INSTALL_DATADIR}/udon-mcp/schemas)

# Debian's copyright file (DEP-5) and changelog, which CPack does not write: the copyright
# file names the project's license (LICENSE; Debian ships its text, so the LICENSE file
# itself is not installed) and gives the bundled files' own licenses in full, from the
# LICENSE files beside them.
# A license text as a DEP-5 field's continuation: every line indented, empty ones " .".
function(udon_dep5_text out file)
  file(READ ${file} text)
  string(STRIP "${text}" text)
  string(REGEX REPLACE "\n[ \t]*\n" "\n.\n" text "${text}")
  string(REGEX REPLACE "\n[ \t]*\n" "\n.\n" text "${text}")  # the second of two empty lines in a row
  string(REPLACE "\n" "\n " text " ${text}")
  set(${out} "${text}" PARENT_SCOPE)
endfunction()
udon_dep5_text(udon_metaschemas_license ${PROJECT_SOURCE_DIR}/src/schema/metaschemas/LICENSE)
set(udon_debian_dir ${PROJECT_BINARY_DIR}/debian)
configure_file(${PROJECT_SOURCE_DIR}/packaging/debian/copyright.in ${udon_debian_dir}/copyright @ONLY)
install(FILES ${udon_debian_dir}/copyright DESTINATION ${CMAKE_INSTALL_DOCDIR})
# The changelog's newest entry names the package version: the project version and the
# Debian revision (a package built from this tree, so a first revision: not native).
set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/packaging/debian/changelog)
file(STRINGS ${PROJECT_SOURCE_DIR}/packaging/debian/changelog udon_changelog_head LIMIT_COUNT 1)
if(NOT udon_changelog_head MATCHES "^udon-mcp \\(${PROJECT_VERSION}-([0-9]+)\\) ")
  message(FATAL_ERROR "packaging/debian/changelog's newest entry is not udon-mcp (${PROJECT_VERSION}-N)")
endif()
set(CPACK_DEBIAN_PACKAGE_RELEASE ${CMAKE_MATCH_1})
file(COPY_FILE ${PROJECT_SOURCE_DIR}/packaging/debian/changelog ${udon_debian_dir}/changelog.Debian)
execute_process(COMMAND gzip -9nf ${udon_debian_dir}/changelog.Debian RESULT_VARIABLE udon_gzip_failed)
if(udon_gzip_failed)
  message(FATAL_ERROR "gzip failed on ${udon_debian_dir}/changelog.Debian")
endif()
install(FILES ${udon_debian_dir}/changelog.Debian.gz DESTINATION ${CMAKE_INSTALL_DOCDIR})
# lintian's overrides, each with its reason.
install(FILES ${PROJECT_SOURCE_DIR}/packaging/debian/udon-mcp.lintian-overrides
        DESTINATION ${CMAKE_INSTALL_DATADIR}/lintian/overrides RENAME udon-mcp)
# Directories 0755 whatever the packager's umask: the directories an install creates take
# the process's umask otherwise (0777 at umask 000); the package's are set once more before
# CPack packs them, since a umask like 077 still narrows these.
set(CMAKE_INSTALL_DEFAULT_DIRECTORY_PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE
    WORLD_READ WORLD_EXECUTE)
set(CPACK_PRE_BUILD_SCRIPTS ${PROJECT_SOURCE_DIR}/cmake/UdonPackageModes.cmake)

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME udon-mcp)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "MCP tool calls as reviewed, fail-closed workflow operations")
# The extended description (CPack puts the summary first and indents each line; lintian
# wants each line under 80 columns).
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION
    "udon-mcp captures an MCP server's tools into a manifest, records a person's\nreview, pins it by RFC 8785 and SHA-256 and gates every tools/call on it;\nudon-mcp serve offers the reviewed tools to any MCP host. Includes the demo\nMCP server.")
set(CPACK_PACKAGE_CONTACT "udon-mcp maintainers <udon-mcp@openudon.invalid>")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # udon-mcp_<version>-<revision>_<arch>.deb
set(CPACK_DEBIAN_PACKAGE_SECTION utils)
# Runtime dependencies: the Debian packages of the shared libraries the binaries link,
# computed by dpkg-shlibdeps, and the two udon-mcp loads on first use (libcurl for HTTP,
# libpq for a PostgreSQL store: base/shared_library.h), which dpkg-shlibdeps cannot see.
set(CPACK_DEBIAN_PACKAGE_DEPENDS "libcurl4 (>= 7.88), libpq5 (>= 15)")
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# The sandbox for servers that ask for one (contract 7.10) is optional.
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "bubblewrap")
set(CPACK_DEBIAN_COMPRESSION_TYPE xz)
include(CPack)
