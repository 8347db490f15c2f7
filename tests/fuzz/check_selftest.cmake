# Shows that a harness run by replay_main can fail: PROGRAM is replay_main linked with
# fuzz_check_selftest.cpp, whose one invariant is that an input is not "bad". Run by CTest as
# fuzz_check_selftest (-DPROGRAM=... -DWORK=<scratch folder>).
file(MAKE_DIRECTORY ${WORK})
file(WRITE ${WORK}/good.bin "good")
file(WRITE ${WORK}/bad.bin "bad")

execute_process(COMMAND ${PROGRAM} ${WORK}/good.bin RESULT_VARIABLE rc OUTPUT_VARIABLE out
                ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR NOT out MATCHES "replayed 1 inputs")
  message(FATAL_ERROR "a good input failed (${rc}): ${out}${err}")
endif()

execute_process(COMMAND ${PROGRAM} ${WORK}/good.bin ${WORK}/bad.bin RESULT_VARIABLE rc
                OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(rc EQUAL 0 OR out MATCHES "replayed")
  message(FATAL_ERROR "a broken invariant went unreported (${rc}): ${out}${err}")
endif()
if(NOT err MATCHES "invariant failed: the self-test input is never \"bad\"")
  message(FATAL_ERROR "a broken invariant was not named: ${err}")
endif()

execute_process(COMMAND ${PROGRAM} ${WORK}/missing.bin RESULT_VARIABLE rc OUTPUT_VARIABLE out
                ERROR_VARIABLE err)
if(rc EQUAL 0 OR NOT err MATCHES "missing.bin: no such file or folder")
  message(FATAL_ERROR "a missing input was not an error (${rc}): ${out}${err}")
endif()
execute_process(COMMAND ${PROGRAM} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(rc EQUAL 0 OR NOT err MATCHES "no inputs to replay")
  message(FATAL_ERROR "replaying nothing was not an error (${rc}): ${out}${err}")
endif()
message(STATUS "fuzz check self-test passed")
