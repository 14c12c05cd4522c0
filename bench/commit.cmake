# Run at every build (cmake -DSRC=... -DOUT=... -P commit.cmake): writes OUT, a C++ file that
# defines rgpu::bench::kCommit as `git describe` of SRC, and rewrites it only when that changed,
# so that a result file names the code of the build that made it rather than that of the build
# tree's last configure. In a tree without .git (a GPU machine's copy) a file already there
# stays; with none, the commit is "unknown".
execute_process(
  COMMAND git describe --always --dirty --abbrev=12
  WORKING_DIRECTORY ${SRC}
  OUTPUT_VARIABLE commit OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET
  RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR NOT commit)
  if(EXISTS ${OUT})
    return()
  endif()
  set(commit unknown)
endif()
set(text "#include \"bench/commit.h\"\nconst char* const rgpu::bench::kCommit = \"${commit}\";\n")
if(EXISTS ${OUT})
  file(READ ${OUT} old)
  if(old STREQUAL text)
    return()
  endif()
endif()
file(WRITE ${OUT} "${text}")
