# Runs one program of docs/api.md (PROGRAM) and fails when it exits non-zero or, when the
# page shows its output (EXPECTED, a file), when it prints anything else.
execute_process(COMMAND ${PROGRAM} OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${PROGRAM} exited with ${rc}:\n${out}${err}")
endif()
if(EXPECTED)
  file(READ ${EXPECTED} expected)
  if(NOT out STREQUAL expected)
    message(FATAL_ERROR "${PROGRAM} printed\n${out}\nwhere docs/api.md shows\n${expected}")
  endif()
endif()
