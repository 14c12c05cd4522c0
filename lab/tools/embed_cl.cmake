# Turns each OpenCL C file into a C++ raw string constant kLabCl_<stem>.
# Invoked by lab/CMakeLists.txt with -DOUTPUT=... -DSOURCES=a.cl|b.cl
# ("|" because a ";" list would be split into separate arguments).
string(REPLACE "|" ";" SOURCES "${SOURCES}")
set(text "// Generated from lab/kernels/*.cl by lab/tools/embed_cl.cmake. Do not edit.\n#pragma once\n")
foreach(src ${SOURCES})
  get_filename_component(stem ${src} NAME_WE)
  file(READ ${src} body)
  string(APPEND text "inline constexpr const char* kLabCl_${stem} = R\"rgpulab(${body})rgpulab\";\n")
endforeach()
file(WRITE ${OUTPUT} "${text}")
