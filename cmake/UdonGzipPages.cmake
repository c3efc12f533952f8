# cmake -DDIR=<folder> -P UdonGzipPages.cmake: compresses every *.1 in DIR in place with
# `gzip -9n` (no name, no time stamp: the same pages give the same bytes), as Debian
# policy wants installed man pages.
file(GLOB pages "${DIR}/*.1")
if(pages)
  execute_process(COMMAND gzip -9nf ${pages} RESULT_VARIABLE failed)
  if(failed)
    message(FATAL_ERROR "gzip failed on the man pages in ${DIR}")
  endif()
endif()
