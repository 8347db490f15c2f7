# Hostile input, round three (issue 35): nothing replaced that is not a regular file, no earlier
# results overwritten without --force, no broken weights accepted, no success reported on a full
# disk, no truncated JPEG read silently. Uses hostile_check() from hostile_input.cmake; each check
# works in its own folder under cli-hostile/.
set(dtrb_dir ${PROJECT_SOURCE_DIR}/tests/data/dtrb)
set(dtrb_ctc ${dtrb_dir}/none-vgg-bilstm-ctc.legacy.pth)
set(jpeg ${dtrb_dir}/img05_400x50_rgb.jpg)

# 2. An output path that exists and is not a regular file is refused, --force or not: the atomic
# writer's rename turned a device node into a regular file (as root) and replaced a FIFO. The
# device is a private node (mknod as root; else a link to /dev/full: the old rename replaced the
# link), never the system's /dev/full.
set(private_full "mknod full c 1 7 2>/dev/null || ln -s /dev/full full")
hostile_check(import_over_device_forced 1 "full: is a character device, not a regular file. refusing"
  SETUP "${private_full}" AFTER "test -c full"
  COMMAND ${cli} import ${dtrb_ctc} --out ${hw}/import_over_device_forced/full --force)
hostile_check(import_over_fifo 1 "f.fvm: is a FIFO, not a regular file. refusing"
  SETUP "mkfifo f.fvm" AFTER "test -p f.fvm"
  COMMAND ${cli} import ${dtrb_ctc} --out ${hw}/import_over_fifo/f.fvm)
hostile_check(init_over_fifo_forced 1 "f.fvm: is a FIFO, not a regular file"
  SETUP "mkfifo f.fvm" AFTER "test -p f.fvm"
  COMMAND ${cli} init-model --attention soft --width 0.125 --out ${hw}/init_over_fifo_forced/f.fvm --force)
hostile_check(pack_over_fifo 1 "f.fvpk: is a FIFO, not a regular file"
  SETUP "mkfifo f.fvpk" AFTER "test -p f.fvpk && ! ls *.part 2>/dev/null"
  COMMAND ${cli} data pack digits:len=5,count=2 --out ${hw}/pack_over_fifo/f.fvpk --force)
hostile_check(failures_over_fifo 1 "f.tsv: is a FIFO, not a regular file"
  SETUP "mkfifo f.tsv" AFTER "test -p f.tsv"
  COMMAND ${cli} eval --model ${soft_model} --data digits:len=5,count=2 --failures ${hw}/failures_over_fifo/f.tsv --force)
hostile_check(show_over_device 1 "full: is a character device"
  SETUP "${private_full}" AFTER "test -c full"
  COMMAND ${cli} data show digits:len=5,count=2 --out ${hw}/show_over_device/full --force)

# 3. A folder that holds an earlier run's results is not written over without --force.
set(errors_args --model ${soft_model} --data digits:len=5,split=test,count=6 --limit 6)
hostile_check(errors_over_results 1 "out: already holds 1 file \\(table.csv\\).*refusing to write the error report over them.*--force"
  SETUP "mkdir out && echo keep > out/table.csv" AFTER "grep -qx keep out/table.csv"
  COMMAND ${cli} eval ${errors_args} --errors ${hw}/errors_over_results/out)
hostile_check(errors_over_results_forced 0 "wrote 6 files to"
  SETUP "mkdir out && echo keep > out/table.csv" AFTER "! grep -qx keep out/table.csv"
  COMMAND ${cli} eval ${errors_args} --errors ${hw}/errors_over_results_forced/out --force)
hostile_check(errors_into_empty_folder 0 "wrote 6 files to"
  SETUP "mkdir out" COMMAND ${cli} eval ${errors_args} --errors ${hw}/errors_into_empty_folder/out)
hostile_check(trace_dataset_over_hocr 1 "out: already holds 1 file \\(000000000.hocr\\).*--force"
  SETUP "mkdir out && echo keep > out/000000000.hocr" AFTER "grep -qx keep out/000000000.hocr"
  COMMAND ${cli} trace --model ${soft_model} --dataset digits:len=5,count=2 --limit 2
  --out ${hw}/trace_dataset_over_hocr/out)
hostile_check(trace_dataset_over_hocr_forced 0 "traced 2 entries"
  SETUP "mkdir out && echo keep > out/000000000.hocr" AFTER "grep -q ocrx_cinfo out/000000000.hocr"
  COMMAND ${cli} trace --model ${soft_model} --dataset digits:len=5,count=2 --limit 2
  --out ${hw}/trace_dataset_over_hocr_forced/out --force)
hostile_check(trace_patches_over_results 1 "out: already holds 1 file \\(trace.json\\)"
  SETUP "mkdir out && echo keep > out/trace.json" AFTER "grep -qx keep out/trace.json"
  COMMAND ${cli} trace --model ${soft_model} ${pgm} --out ${hw}/trace_patches_over_results/out)

# 4. Non-finite weights in a .pth are refused by key (they imported with exit 0 and traced
# "confidence -nan"). The legacy format has no checksum: its last 4 bytes are the last float of
# the last storage, set here to NaN and to +infinity.
set(last_float "dd of=m.pth bs=1 seek=$(( $(stat -c %s m.pth) - 4 )) conv=notrunc status=none")
hostile_check(import_nan_weight 1 "m.pth: key 'FeatureExtraction.ConvNet.0.bias' holds 1 NaN value \\(of 4\\)"
  SETUP "cp '${dtrb_ctc}' m.pth && printf '\\000\\000\\300\\177' | ${last_float}" AFTER "test ! -e m.fvm"
  COMMAND ${cli} import ${hw}/import_nan_weight/m.pth --out ${hw}/import_nan_weight/m.fvm)
hostile_check(trace_inf_weight 1 "m.pth: key 'FeatureExtraction.ConvNet.0.bias' holds 1 infinite value \\(of 4\\)"
  SETUP "cp '${dtrb_ctc}' m.pth && printf '\\000\\000\\200\\177' | ${last_float}"
  COMMAND ${cli} trace --model ${hw}/trace_inf_weight/m.pth ${pgm})

# Wrong dtypes (scripts/make-hostile-weights): Int and Bool where weights belong are refused by
# key; Half and Double are converted as load_state_dict does, and the import says so.
hostile_check(import_int_weights 1 "weights-int.pth: key 'Prediction.weight' holds int32 values where float weights belong"
  AFTER "test ! -e m.fvm"
  COMMAND ${cli} import ${dtrb_dir}/weights-int.pth --out ${hw}/import_int_weights/m.fvm)
hostile_check(import_bool_weights 1 "weights-bool.pth: key 'Prediction.weight' holds bool values where float weights belong"
  COMMAND ${cli} import ${dtrb_dir}/weights-bool.pth --out ${hw}/import_bool_weights/m.fvm)
hostile_check(import_half_weights 0 "[0-9]+ tensors stored as float16 converted to float32, as load_state_dict does"
  AFTER "test -s m.fvm"
  COMMAND ${cli} import ${dtrb_dir}/weights-half.pth --out ${hw}/import_half_weights/m.fvm)
hostile_check(import_double_weights 0 "[0-9]+ tensors stored as float64 converted to float32, as load_state_dict does"
  AFTER "test -s m.fvm"
  COMMAND ${cli} import ${dtrb_dir}/weights-double.pth --out ${hw}/import_double_weights/m.fvm)
# 9. An empty --character fell back to the default charset without a word.
hostile_check(import_empty_character 2 "--character is empty"
  COMMAND ${cli} import ${dtrb_ctc} --character= --out ${hw}/import_empty_character/m.fvm)

# 5. A full disk is an error, never "wrote ...": every writer checks after the flush and the close.
add_test(NAME cli_hostile_full_disk
  COMMAND ${CMAKE_CURRENT_SOURCE_DIR}/e2e/full_disk.sh ${cli} ${soft_model} ${pgm} ${dtrb_ctc}
  WORKING_DIRECTORY ${hw})
set_tests_properties(cli_hostile_full_disk PROPERTIES LABELS "cli;hostile" TIMEOUT 300
  SKIP_RETURN_CODE 77 PASS_REGULAR_EXPRESSION "full disk checks passed")

# 6. A truncated JPEG (cut to its first third) decodes with grey rows: said when traced, refused
# by the data commands unless --skip-bad (it was read silently, exit 0).
if(FOVEAL_WITH_OPENCV)
  set(cut_jpeg "head -c 2900 '${jpeg}' > cut.jpg")
  hostile_check(trace_truncated_jpeg 0 "warning: .*cut.jpg: truncated JPEG"
    SETUP "${cut_jpeg}" COMMAND ${cli} trace --model ${soft_model} ${hw}/trace_truncated_jpeg/cut.jpg)
  hostile_check(trace_whole_jpeg_no_warning 0 "^prediction"
    COMMAND ${cli} trace --model ${soft_model} ${jpeg}
    PROPERTIES FAIL_REGULAR_EXPRESSION "warning")
  hostile_check(eval_truncated_jpeg 1 "line 2 \\(cut.jpg\\): .*truncated JPEG"
    SETUP "${cut_jpeg} && cp '${pgm}' a.pgm && printf 'a.pgm\\t46214\\ncut.jpg\\t12345\\n' > gt.txt"
    COMMAND ${cli} eval --model ${soft_model} --data ${hw}/eval_truncated_jpeg)
  hostile_check(eval_truncated_jpeg_skip 0 "1 entry skipped"
    SETUP "${cut_jpeg} && cp '${pgm}' a.pgm && printf 'a.pgm\\t46214\\ncut.jpg\\t12345\\n' > gt.txt"
    COMMAND ${cli} eval --model ${soft_model} --data ${hw}/eval_truncated_jpeg_skip --skip-bad)
  hostile_check(pack_truncated_jpeg 1 "cut.jpg.*truncated JPEG"
    SETUP "${cut_jpeg} && cp '${pgm}' a.pgm && printf 'a.pgm\\t46214\\ncut.jpg\\t12345\\n' > gt.txt"
    AFTER "test ! -e out.fvpk"
    COMMAND ${cli} data pack ${hw}/pack_truncated_jpeg --out ${hw}/pack_truncated_jpeg/out.fvpk)
endif()

# 7. config.json edited before --resume: an unknown key and a bad preset were accepted.
set(one_iteration "'${cli}' train --preset digits-soft --width 0.125 --batch 2 --iterations 1 --data digits:len=5,count=8 --eval-data digits:len=5,split=test,count=2 --run run --threads 1 --loader-threads 1 >/dev/null")
hostile_check(resume_unknown_key 1 "config.json: unknown key 'lamda_r'"
  SETUP "${one_iteration} && sed -i '1s/{/{\"lamda_r\": 0.5,/' run/config.json"
  COMMAND ${cli} train --run ${hw}/resume_unknown_key/run --resume --iterations 2)
hostile_check(resume_unknown_model_key 1 "config.json: unknown key 'model.atention'"
  SETUP "${one_iteration} && sed -i 's/\"attention\": \"soft\"/\"atention\": \"soft\"/' run/config.json"
  COMMAND ${cli} train --run ${hw}/resume_unknown_model_key/run --resume --iterations 2)
hostile_check(resume_bad_preset 1 "config.json: 'preset' is .nope., not one of the presets"
  SETUP "${one_iteration} && sed -i 's/\"preset\": \"digits-soft\"/\"preset\": \"nope\"/' run/config.json"
  COMMAND ${cli} train --run ${hw}/resume_bad_preset/run --resume --iterations 2)
hostile_check(resume_bad_type 1 "config.json: bad train config JSON at key 'batch_size'"
  SETUP "${one_iteration} && sed -i 's/\"batch_size\": 2/\"batch_size\": \"two\"/' run/config.json"
  COMMAND ${cli} train --run ${hw}/resume_bad_type/run --resume --iterations 2)

# 8. Character boxes far outside the image (+-1e30) were accepted by eval and written into packs.
set(far_boxes "cp '${pgm}' a.pgm && printf 'a.pgm\\t46214\\tboxes=0,0,10,32 10,0,20,32 -1e30,0,1e30,32 30,0,40,32 40,0,50,32\\n' > gt.txt")
hostile_check(eval_boxes_outside 1 "line 1 \\(a.pgm\\): character box 3 .-1e.30,0,1e.30,32. lies outside the [0-9]+x[0-9]+ image"
  SETUP "${far_boxes}" COMMAND ${cli} eval --model ${soft_model} --data ${hw}/eval_boxes_outside)
hostile_check(pack_boxes_outside 1 "character box 3 .* lies outside"
  SETUP "${far_boxes}" AFTER "test ! -e out.fvpk"
  COMMAND ${cli} data pack ${hw}/pack_boxes_outside --out ${hw}/pack_boxes_outside/out.fvpk)

