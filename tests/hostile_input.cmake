# Hostile input, faults and careless use (issue 20): foveal-cli must not crash, hang or destroy
# saved work, and every refusal names the file (and the entry) and what is wrong. Each check
# works in its own folder under cli-hostile/, re-created by its SETUP, so checks run in any order.
set(hw ${CMAKE_CURRENT_BINARY_DIR}/cli-hostile)
file(MAKE_DIRECTORY ${hw})
set(soft_model ${PROJECT_SOURCE_DIR}/samples/models/soft.fvm)
set(chain_model ${PROJECT_SOURCE_DIR}/samples/models/sharp-chain.fvm)
set(pgm ${PROJECT_SOURCE_DIR}/samples/images/digits-46214.pgm)

# hostile_check(NAME STATUS REGEX SETUP ... COMMAND ...): foveal_cli_check in cli-hostile/NAME.
# No semicolons in REGEX (CMake would split it into a list): match one with ".".
function(hostile_check name status regex)
  cmake_parse_arguments(H "" "SETUP;AFTER" "COMMAND;PROPERTIES" ${ARGN})
  set(dir ${hw}/${name})
  set(setup "rm -rf '${dir}' && mkdir -p '${dir}'")
  if(H_SETUP)
    set(setup "${setup} && cd '${dir}' && ${H_SETUP}")
  endif()
  set(after)
  if(H_AFTER)
    set(after AFTER "cd '${dir}' && ${H_AFTER}")
  endif()
  foveal_cli_check(cli_hostile_${name} ${status} "${regex}" SETUP "${setup}" ${after}
    WORKING_DIRECTORY ${hw} LABELS "cli;hostile" COMMAND ${H_COMMAND} PROPERTIES ${H_PROPERTIES})
endfunction()

# 1. A directory where a file is expected: named, not an uncaught std::ios_failure (exit 134).
hostile_check(dir_as_image 1 "dir_as_image/d.png: cannot read image \\(a directory"
  SETUP "mkdir d.png" COMMAND ${cli} trace --model ${soft_model} ${hw}/dir_as_image/d.png)
hostile_check(dir_as_model 1 "dir_as_model/m.fvm: cannot read model file \\(a directory"
  SETUP "mkdir m.fvm" COMMAND ${cli} info --model ${hw}/dir_as_model/m.fvm)
hostile_check(dot_in_gt_info 0 "line 2 \\(\\.\\): .*cannot read image \\(a directory"
  SETUP "cp '${pgm}' a.pgm && printf 'a.pgm\\t46214\\n.\\t1\\n' > gt.txt"
  COMMAND ${cli} data info ${hw}/dot_in_gt_info)
hostile_check(dot_in_gt_pack 0 "skipped: .*line 2 \\(\\.\\): .*a directory"
  SETUP "cp '${pgm}' a.pgm && printf 'a.pgm\\t46214\\n.\\t1\\n' > gt.txt"
  AFTER "test -f out.fvpk && ! ls *.part* 2>/dev/null"
  COMMAND ${cli} data pack ${hw}/dot_in_gt_pack --skip-bad --out ${hw}/dot_in_gt_pack/out.fvpk)
hostile_check(gt_is_dir 1 "gt.txt: cannot read gt.txt \\(a directory"
  SETUP "mkdir gt.txt" COMMAND ${cli} data info ${hw}/gt_is_dir)

# 2. A truncated or empty LMDB: refused before liblmdb maps it (SIGBUS, exit 135, before).
if(FOVEAL_WITH_LMDB)
  hostile_check(lmdb_truncated 1 "data.mdb: truncated LMDB \\(6000 bytes, its pages need"
    SETUP "'${cli}' data make-digits --len 5 --count 40 --format lmdb --out l >/dev/null && truncate -s 6000 l/data.mdb"
    COMMAND ${cli} data info ${hw}/lmdb_truncated/l)
  hostile_check(lmdb_empty 1 "data.mdb: empty file, not an LMDB database"
    SETUP "mkdir l && : > l/data.mdb" COMMAND ${cli} data info ${hw}/lmdb_empty/l)
endif()

# 3. A region scale out of range: one check, shared (aborted with 134 before).
hostile_check(make_digits_scale_0 1 "invalid preprocessing: region scale must be in \\[1, 8\\], not 0"
  COMMAND ${cli} data make-digits --len 5 --count 4 --scale 0 --out ${hw}/make_digits_scale_0/x.fvpk)
hostile_check(pack_scale_negative 1 "invalid preprocessing: region scale must be in \\[1, 8\\], not -1"
  SETUP "cp '${pgm}' a.pgm && printf 'a.pgm\\t46214\\n' > gt.txt"
  COMMAND ${cli} data pack ${hw}/pack_scale_negative --scale -1 --out ${hw}/pack_scale_negative/x.fvpk)

# 5. Saved files are not overwritten without --force; an input never.
hostile_check(eval_failures_over_model 1 "best.fvm: already holds a model file. refusing to replace it"
  SETUP "cp '${chain_model}' best.fvm"
  AFTER "cmp best.fvm '${chain_model}'"
  COMMAND ${cli} eval --model ${soft_model} --data digits:len=5,count=4
  --failures ${hw}/eval_failures_over_model/best.fvm)
hostile_check(eval_failures_over_input 1 "refusing to write the failures file over an input of this command"
  SETUP "cp '${soft_model}' m.fvm"
  AFTER "cmp m.fvm '${soft_model}'"
  COMMAND ${cli} eval --model ${hw}/eval_failures_over_input/m.fvm --data digits:len=5,count=4
  --failures ${hw}/eval_failures_over_input/m.fvm --force)
hostile_check(pack_over_model 1 "m.fvm: already holds a model file"
  SETUP "cp '${soft_model}' m.fvm && cp '${pgm}' a.pgm && printf 'a.pgm\\t46214\\n' > gt.txt"
  AFTER "cmp m.fvm '${soft_model}'"
  COMMAND ${cli} data pack ${hw}/pack_over_model --out ${hw}/pack_over_model/m.fvm)
hostile_check(init_over_model 1 "m.fvm: already holds a model file.*--force"
  SETUP "cp '${soft_model}' m.fvm" AFTER "cmp m.fvm '${soft_model}'"
  COMMAND ${cli} init-model --attention soft --width 0.125 --out ${hw}/init_over_model/m.fvm)
hostile_check(init_over_model_forced 0 "wrote .*m.fvm"
  SETUP "cp '${soft_model}' m.fvm" AFTER "! cmp -s m.fvm '${soft_model}'"
  COMMAND ${cli} init-model --attention soft --width 0.125 --out ${hw}/init_over_model_forced/m.fvm
  --force)
hostile_check(convert_over_dataset 1 "out: already holds a dataset \\(gt.txt\\)"
  SETUP "mkdir out && printf 'x.png\\tkeep\\n' > out/gt.txt"
  AFTER "grep -q keep out/gt.txt"
  COMMAND ${cli} data convert digits:len=5,count=3 --format folder --out ${hw}/convert_over_dataset/out)
hostile_check(pack_over_own_input 1 "refusing to write the packed dataset over an input of this command"
  SETUP "'${cli}' data make-digits --len 5 --count 4 --out d.fvpk >/dev/null"
  COMMAND ${cli} data pack ${hw}/pack_over_own_input/d.fvpk --out ${hw}/pack_over_own_input/d.fvpk
  --force)

# 7. Non-finite numbers on the command line (--lambda-r nan trained, then --resume refused the
# config.json Foveal wrote).
hostile_check(lambda_nan 2 "--lambda-r expects a finite number, got 'nan'"
  COMMAND ${cli} train --preset digits-soft --lambda-r nan --run ${hw}/lambda_nan/run)
hostile_check(width_inf 2 "--width expects a finite number, got 'inf'"
  COMMAND ${cli} init-model --attention soft --width inf --out ${hw}/width_inf/m.fvm)

# 8. Files that never end or block: stat first (memory grew without end, or the command hung).
hostile_check(dev_zero_model 1 "/dev/zero: cannot read model file \\(a character device"
  COMMAND ${cli} info --model /dev/zero)
hostile_check(dev_zero_image 1 "/dev/zero: cannot read image \\(a character device"
  COMMAND ${cli} trace --model ${soft_model} /dev/zero)
if(FOVEAL_WITH_OPENCV)  # without it the words generator stops first: it needs OpenCV to render
  hostile_check(dev_zero_wordlist 1 "/dev/zero: cannot read word list \\(a character device"
    COMMAND ${cli} data info words:wordlist=/dev/zero,count=3)
endif()
hostile_check(fifo_image 1 "f.png: cannot read image \\(a FIFO"
  SETUP "mkfifo f.png" COMMAND ${cli} trace --model ${soft_model} ${hw}/fifo_image/f.png)

# 10. Bounds with a message (these ran for days, or started thousands of threads).
hostile_check(eval_stream_unlimited 1 "an endless stream needs a limit \\(eval --limit N\\)"
  COMMAND ${cli} eval --model ${soft_model} --data digits:len=5,split=stream)
hostile_check(digits_count_huge 1 "'count' is 99999999999999, more than the limit of 100000000"
  COMMAND ${cli} data info digits:count=99999999999999)
hostile_check(train_threads_huge 1 "threads and loader_threads must be at most 256"
  COMMAND ${cli} train --preset digits-soft --threads 10000 --run ${hw}/train_threads_huge/run)
hostile_check(trace_threads_huge 1 "--threads 10000: the number of compute threads must be between 0"
  COMMAND ${cli} trace --model ${soft_model} ${pgm} --threads 10000)

# 11. eval names what it cannot read (it skipped silently and exited 0, even with nothing read).
set(gt_letters "cp '${pgm}' a.pgm && cp '${pgm}' b.pgm && printf 'a.pgm\\t46214\\nb.pgm\\tabc\\n' > gt.txt")
hostile_check(eval_outside_charset 1 "line 2 \\(b.pgm\\): .*abc"
  SETUP "${gt_letters}" COMMAND ${cli} eval --model ${soft_model} --data ${hw}/eval_outside_charset)
hostile_check(eval_outside_charset_skip 0 "1 entry skipped, unreadable by this model: 1 label outside the charset 0123456789"
  SETUP "${gt_letters}"
  COMMAND ${cli} eval --model ${soft_model} --data ${hw}/eval_outside_charset_skip --skip-bad)
hostile_check(eval_nothing_readable 1 "no entry this model can read. 1 entry skipped \\(1 label outside the charset"
  SETUP "cp '${pgm}' b.pgm && printf 'b.pgm\\tabc\\n' > gt.txt"
  COMMAND ${cli} eval --model ${soft_model} --data ${hw}/eval_nothing_readable --skip-bad)
hostile_check(train_nothing_usable 1 "no usable entry for this model. 4 entries skipped \\(4 label outside the charset 0123456789"
  SETUP "cp '${pgm}' b.pgm && printf 'b.pgm\\tabc\\nb.pgm\\tabc\\nb.pgm\\tabc\\nb.pgm\\tabc\\n' > gt.txt"
  COMMAND ${cli} train --preset digits-soft --width 0.125 --batch 2 --iterations 1
  --data ${hw}/train_nothing_usable --eval-data digits:len=5,split=test,count=2
  --run ${hw}/train_nothing_usable/run --threads 1 --loader-threads 1)

# 13. Encoding: a UTF-8 byte order mark is not part of the first path; invalid UTF-8 is named.
hostile_check(gt_bom 0 "^readable: +1$"
  SETUP "cp '${pgm}' a.pgm && printf '\\357\\273\\277a.pgm\\t46214\\n' > gt.txt"
  COMMAND ${cli} data info ${hw}/gt_bom)
hostile_check(gt_invalid_utf8 0 "line 1 \\(a.pgm\\): the label is not valid UTF-8 \\(byte 2\\)"
  SETUP "cp '${pgm}' a.pgm && printf 'a.pgm\\t4\\377\\n' > gt.txt"
  COMMAND ${cli} data info ${hw}/gt_invalid_utf8)

# 14. Nonsense flags are refused, naming the flag.
hostile_check(make_digits_count_0 2 "--count must be between 1 and"
  COMMAND ${cli} data make-digits --len 5 --count 0 --out ${hw}/make_digits_count_0/x.fvpk)
hostile_check(pack_input_w_huge 1 "invalid preprocessing: input width must be in \\[8, 4096\\], not 100000"
  COMMAND ${cli} data pack digits:len=5,count=2 --input-w 100000 --out ${hw}/pack_input_w_huge/x.fvpk)
hostile_check(pack_max_length_negative 2 "--max-length must be between 0 and"
  COMMAND ${cli} data pack digits:len=5,count=2 --max-length -1 --out ${hw}/pack_max_length_negative/x.fvpk)
hostile_check(bench_seconds_negative 2 "--seconds must be between 0.01 and 3600, got -1"
  COMMAND ${cli} data bench --seconds -1)
