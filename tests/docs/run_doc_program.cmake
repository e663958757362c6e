# Runs one program of a docs page (PROGRAM, from PAGE) and fails when it exits non-zero or, when the
# page shows its output (EXPECTED, a file), when it prints anything else.
execute_process(COMMAND ${PROGRAM} OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${PROGRAM} exited with ${rc}:\n${out}${err}")
endif()
if(EXPECTED)
  file(READ ${EXPECTED} expected)
  if(NOT out STREQUAL expected)
    message(FATAL_ERROR "${PROGRAM} printed\n${out}\nwhere ${PAGE} shows\n${expected}")
  endif()
endif()
