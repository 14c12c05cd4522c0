# What `cmake --install` puts beside the programs (which each folder installs itself), and
# the .deb that `cpack` makes of it all. docs/install.md says how to use them.
install(FILES ${PROJECT_SOURCE_DIR}/dist/rgpud.toml DESTINATION ${RGPU_SYSCONFDIR}/rgpu)
install(FILES ${PROJECT_SOURCE_DIR}/config/rgpud.example.toml ${PROJECT_SOURCE_DIR}/README.md
              ${PROJECT_SOURCE_DIR}/docs/pool.md ${PROJECT_SOURCE_DIR}/docs/security.md
              ${PROJECT_SOURCE_DIR}/docs/install.md
        DESTINATION ${CMAKE_INSTALL_DOCDIR})
# systemd reads units from /usr/local/lib/systemd/system as well as /usr/lib/systemd/system.
install(FILES ${PROJECT_SOURCE_DIR}/dist/rgpud.service DESTINATION lib/systemd/system)

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGE_NAME rgpu)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_CONTACT "rgpu maintainers <rgpu@localhost>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "remote GPUs over OpenCL: the rgpud daemon, the rgpu ICD and CLI")
set(CPACK_PACKAGE_DESCRIPTION "rgpud shares a host's OpenCL devices with many tenants over TCP or a\n\
Unix socket; librgpu-icd makes those devices look local to unmodified OpenCL programs\n\
through the ICD loader; servers may form a pool through etcd.")
# A package installs under /usr, never /usr/local (Debian policy), whatever the build's prefix.
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_STRIP_FILES ON)  # debug info stays in the build tree
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)  # Depends: from the libraries the binaries link
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "ocl-icd-libopencl1, clinfo")
set(CPACK_DEBIAN_PACKAGE_SUGGESTS "etcd-server, pocl-opencl-icd")
# ldconfig for the ICD; the config and the vendors file are the administrator's to edit.
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA ${PROJECT_SOURCE_DIR}/dist/triggers ${PROJECT_SOURCE_DIR}/dist/conffiles)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
include(CPack)
