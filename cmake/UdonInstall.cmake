# What `cmake --install` puts under CMAKE_INSTALL_PREFIX besides the binaries, their man
# pages and bash completion (src/cli, src/demo_server), and the Debian package CPack builds
# from that tree (scripts/package.sh). The layout is contract section 7.22.
install(FILES ${PROJECT_SOURCE_DIR}/README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})
# docs/ and examples/ keep their places beside the README, so its links work installed.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/docs/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/docs)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/examples/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples)
# The manifest and binding schemas udon-mcp compiles in, for other tools to validate with.
install(DIRECTORY ${PROJECT_SOURCE_DIR}/schemas/ DESTINATION ${CMAKE_INSTALL_DATADIR}/udon-mcp/schemas)

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME udon-mcp)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "MCP tool calls as reviewed, fail-closed workflow operations")
# The extended description (CPack puts the summary first and indents each line).
set(CPACK_DEBIAN_PACKAGE_DESCRIPTION
    "udon-mcp captures an MCP server's tools into a manifest, records a person's review,\npins it by RFC 8785 and SHA-256 and gates every tools/call on it; udon-mcp serve\noffers the reviewed tools to any MCP host. Includes the demo MCP server.")
set(CPACK_PACKAGE_CONTACT "udon-mcp maintainers <udon-mcp@openudon.invalid>")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)  # udon-mcp_<version>_<arch>.deb
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
