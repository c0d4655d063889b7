# Install rules and the Debian package (CPack DEB): the app, its presets and bundled
# checkpoints as plain files (the app has them compiled in; these are for File → Open),
# the desktop entry, AppStream metainfo and the hicolor icons. Included last by the
# top-level CMakeLists.txt. Build the package with packaging/deb.sh; packaging/test-deb.sh
# (CTest: package_deb) builds it from a build folder and checks what it installs.

set(PARROT_APP_ID io.github.parrotscope.Parrotscope)
set(PARROT_ICON_SVG ${PROJECT_SOURCE_DIR}/resources/icons/${PARROT_APP_ID}.svg)
# The usual hicolor sizes: menus and panels (16-32), docks and launchers (48-256).
set(PARROT_ICON_SIZES 16 32 48 64 128 256)
list(JOIN PARROT_ICON_SIZES ", " PARROT_ICON_SIZES_TEXT)

# Relative destinations (bin, share), so CPack can stage them under its own prefix.
include(GNUInstallDirs)

install(TARGETS parrotscope RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
# qt_standard_project_setup() gives installed binaries an $ORIGIN run path for bundled Qt
# libraries; this one uses the system's only (Debian policy: no run path in /usr/bin).
set_target_properties(parrotscope PROPERTIES INSTALL_RPATH "")

file(GLOB PARROT_INSTALL_PRESETS CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/resources/presets/*.json)
file(GLOB PARROT_INSTALL_CHECKPOINTS CONFIGURE_DEPENDS ${PROJECT_SOURCE_DIR}/resources/checkpoints/*.safetensors)
install(FILES ${PARROT_INSTALL_PRESETS} DESTINATION ${CMAKE_INSTALL_DATADIR}/parrotscope/presets)
install(FILES ${PARROT_INSTALL_CHECKPOINTS} DESTINATION ${CMAKE_INSTALL_DATADIR}/parrotscope/checkpoints)

install(FILES ${PROJECT_SOURCE_DIR}/packaging/${PARROT_APP_ID}.desktop
        DESTINATION ${CMAKE_INSTALL_DATADIR}/applications)
install(FILES ${PROJECT_SOURCE_DIR}/packaging/${PARROT_APP_ID}.metainfo.xml
        DESTINATION ${CMAKE_INSTALL_DATADIR}/metainfo)

# Icons: the SVG is the only source; the PNGs are rendered from it at build time by a small
# Qt tool (no display needed), so they are never committed and cannot drift from it.
add_executable(parrot_rendericon ${PROJECT_SOURCE_DIR}/packaging/rendericon.cpp)
target_link_libraries(parrot_rendericon PRIVATE Qt6::Gui Qt6::Svg parrot_warnings)

set(PARROT_ICON_DIR ${PROJECT_BINARY_DIR}/packaging/icons)
set(PARROT_ICON_PNGS)
foreach(size IN LISTS PARROT_ICON_SIZES)
  list(APPEND PARROT_ICON_PNGS ${PARROT_ICON_DIR}/${size}x${size}/apps/${PARROT_APP_ID}.png)
endforeach()
add_custom_command(
  OUTPUT ${PARROT_ICON_PNGS}
  COMMAND parrot_rendericon ${PARROT_ICON_SVG} ${PARROT_ICON_DIR} ${PARROT_APP_ID} ${PARROT_ICON_SIZES}
  DEPENDS parrot_rendericon ${PARROT_ICON_SVG}
  COMMENT "Rendering the app icon to PNG at ${PARROT_ICON_SIZES_TEXT} px"
  VERBATIM)
add_custom_target(parrot_icons ALL DEPENDS ${PARROT_ICON_PNGS})

install(FILES ${PARROT_ICON_SVG} DESTINATION ${CMAKE_INSTALL_DATADIR}/icons/hicolor/scalable/apps)
foreach(size IN LISTS PARROT_ICON_SIZES)
  install(FILES ${PARROT_ICON_DIR}/${size}x${size}/apps/${PARROT_APP_ID}.png
          DESTINATION ${CMAKE_INSTALL_DATADIR}/icons/hicolor/${size}x${size}/apps)
endforeach()

# ---- The Debian package -----------------------------------------------------------------
set(CPACK_GENERATOR DEB)
set(CPACK_VERBATIM_VARIABLES TRUE)   # the description quotes paper titles
set(CPACK_PACKAGE_NAME parrotscope)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_VENDOR "Parrotscope developers")
set(CPACK_PACKAGE_CONTACT "Parrotscope developers")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "desktop lab for copying and in-context learning in sequence models")
set(CPACK_PACKAGE_DESCRIPTION
  "Parrotscope trains small Transformers, Mamba, LSTM, S4 and hybrid models on\n\
string copying, n-gram lookup, phone-book lookup and in-context-learning tasks\n\
while showing live curves, then looks inside them: attention heatmaps with the\n\
lookup heads marked, a state-space model's state against what it can store,\n\
and accuracy against string length for several models, exported as figures.\n\
It reproduces, at laptop scale, \"Repeat After Me: Transformers are Better than\n\
State Space Models at Copying\" (Jelassi et al., 2024) and \"Can Mamba Learn\n\
How to Learn?\" (Park et al., 2024).")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_STRIP_FILES TRUE)

set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)   # parrotscope_<version>_<arch>.deb
set(CPACK_DEBIAN_PACKAGE_SECTION science)
set(CPACK_DEBIAN_PACKAGE_PRIORITY optional)
set(CPACK_DEBIAN_PACKAGE_HOMEPAGE "https://github.com/parrotscope/parrotscope")
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION TRUE)
# Debian 12 runtime packages, one per library the binary links directly (readelf -d;
# dpkg -S on the file ldd resolves each to). Written out rather than found by
# CPACK_DEBIAN_PACKAGE_SHLIBDEPS so building the package needs no dpkg-dev; the lower bounds
# are what dpkg-shlibdeps derives from the symbols used. test-deb.sh fails when a linked
# library's package is missing here. libopenblas0-openmp is not linked (torch loads
# libblas.so.3 through the alternatives system), but without it torch runs on the
# reference BLAS, ~10x slower. libgomp1: the core is built with
# -fopenmp (its kernels' at::parallel_for; GOMP_parallel is GOMP_4.0, hence >= 4.9).
set(PARROT_DEB_DEPENDS
  "libc6 (>= 2.34)"
  "libgcc-s1 (>= 3.0)"
  "libstdc++6 (>= 11)"
  "libqt6core6 (>= 6.4.0)"
  "libqt6gui6 (>= 6.4.0)"
  "libqt6widgets6 (>= 6.4.0)"
  "libqt6svg6 (>= 6.2.0)"
  "libqcustomplot2.1-qt6 (>= 2.1.0+dfsg1)"
  "libtorch1.13 (>= 1.13.1+dfsg)"
  "libgomp1 (>= 4.9)"
  "libopenblas0-openmp")
list(JOIN PARROT_DEB_DEPENDS ", " CPACK_DEBIAN_PACKAGE_DEPENDS)
# Without it a Wayland session runs the window through XWayland.
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "qt6-wayland")

include(CPack)

# Builds the package from this build folder (only the app and the icons, not the tests) and
# checks what it installs; quick, so it runs with the rest of the suite. The package depends on
# Debian's libtorch1.13: a build against another LibTorch (the PyTorch wheel's,
# packaging/torch-from-pip.sh) is not one to package, so its package is not tested.
if(PARROT_BUILD_TESTS AND Torch_DIR MATCHES "^/usr/lib/")
  add_test(NAME package_deb COMMAND bash ${PROJECT_SOURCE_DIR}/packaging/test-deb.sh ${PROJECT_BINARY_DIR})
  set_tests_properties(package_deb PROPERTIES TIMEOUT 600 ENVIRONMENT "QT_QPA_PLATFORM=offscreen")
endif()
