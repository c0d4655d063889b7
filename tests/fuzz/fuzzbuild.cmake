# The fuzz build (-DPARROT_FUZZ=ON, clang): the base library, which holds every reader of a file
# a stranger may hand the app, instrumented for libFuzzer and built with AddressSanitizer and
# UBSan; one harness per reader; and the torch-free tests under the same sanitizers.
# packaging/fuzz.sh configures, builds and runs it; CTest runs each harness for
# PARROT_FUZZ_SECONDS on its committed corpus, and any crash, leak or sanitizer report fails it,
# leaving the input that caused it in fuzz-artifacts/ in the build folder.
if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
  message(FATAL_ERROR "PARROT_FUZZ needs clang with libFuzzer (Debian: clang libclang-rt-dev); "
                      "configure with -DCMAKE_CXX_COMPILER=clang++ (packaging/fuzz.sh does)")
endif()
set(PARROT_FUZZ_SECONDS 20 CACHE STRING "How long CTest runs each harness, in seconds")

find_package(Qt6 6.2 REQUIRED COMPONENTS Core Test)
qt_standard_project_setup()

# Everything under the sanitizers; any report aborts (no recovery), so a test cannot pass over one.
set(PARROT_SANITIZERS -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer)
add_compile_options(${PARROT_SANITIZERS} -g -O1)
add_link_options(-fsanitize=address,undefined)

add_subdirectory(base)
# Coverage instrumentation of the readers for libFuzzer; the tests linked against the same
# library without libFuzzer get the sanitizer runtime's empty coverage callbacks.
target_compile_options(parrot_base PRIVATE -fsanitize=fuzzer-no-link)

enable_testing()
set(PARROT_FUZZ_DIR ${PROJECT_SOURCE_DIR}/tests/fuzz)
set(PARROT_TEST_DATA ${PROJECT_SOURCE_DIR}/tests/data)
set(PARROT_FUZZ_ENV "ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:detect_stack_use_after_return=1"
                    "UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1"
                    "QT_QPA_PLATFORM=offscreen")

# One harness a reader: tests/fuzz/fuzz_NAME.cpp, its seed corpus tests/fuzz/corpus/NAME/ (small
# files from the test fixtures, plus every input that once crashed it) and its dictionary
# tests/fuzz/NAME.dict. New inputs go to fuzz-corpus/NAME in the build folder, never into the source.
foreach(name safetensors torchzip tokenizer bpe config hfconfig squad)
  add_executable(fuzz_${name} ${PARROT_FUZZ_DIR}/fuzz_${name}.cpp ${PARROT_FUZZ_DIR}/fuzzinput.h)
  target_compile_options(fuzz_${name} PRIVATE -fsanitize=fuzzer)
  target_link_options(fuzz_${name} PRIVATE -fsanitize=fuzzer)
  target_link_libraries(fuzz_${name} PRIVATE parrot_base parrot_warnings)
  target_compile_definitions(fuzz_${name} PRIVATE PARROT_TEST_DATA="${PARROT_TEST_DATA}")
  parrot_torch_fence(fuzz_${name})
  file(MAKE_DIRECTORY ${CMAKE_BINARY_DIR}/fuzz-corpus/${name} ${CMAKE_BINARY_DIR}/fuzz-artifacts)
  add_test(NAME fuzz_${name}
           COMMAND fuzz_${name} -max_total_time=${PARROT_FUZZ_SECONDS} -timeout=10 -rss_limit_mb=2048
                   -max_len=65536 -print_final_stats=1 -dict=${PARROT_FUZZ_DIR}/${name}.dict
                   -artifact_prefix=${CMAKE_BINARY_DIR}/fuzz-artifacts/${name}-
                   ${CMAKE_BINARY_DIR}/fuzz-corpus/${name} ${PARROT_FUZZ_DIR}/corpus/${name})
  set_tests_properties(fuzz_${name} PROPERTIES TIMEOUT 300 ENVIRONMENT "${PARROT_FUZZ_ENV}")
endforeach()

# The tests of the config, the tasks, the tokenizer, SQuAD and the HuggingFace cache: the same
# sources as the main suite's, built again under the sanitizers.
foreach(name tst_config tst_tasks tst_tokenizer tst_squad tst_hfcache)
  add_executable(${name}_asan ${PROJECT_SOURCE_DIR}/tests/${name}.cpp)
  target_include_directories(${name}_asan PRIVATE ${PROJECT_SOURCE_DIR}/tests)
  target_link_libraries(${name}_asan PRIVATE parrot_base Qt6::Test parrot_warnings)
  target_compile_definitions(${name}_asan PRIVATE PARROT_TEST_DATA="${PARROT_TEST_DATA}")
  parrot_torch_fence(${name}_asan)
  add_test(NAME ${name}_asan COMMAND sh ${PROJECT_SOURCE_DIR}/tests/freshhome.sh $<TARGET_FILE:${name}_asan>)
  set_tests_properties(${name}_asan PROPERTIES TIMEOUT 600
                       ENVIRONMENT "${PARROT_FUZZ_ENV};QTEST_FUNCTION_TIMEOUT=600000")
endforeach()
