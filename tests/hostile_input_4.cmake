# Hostile input, round four (issue 65): no input replaced, no invalid UTF-8 charset reaching the
# JSON writer. Uses hostile_check() from hostile_input.cmake; each check works in its own folder
# under cli-hostile/. (The LMDB writers on a full disk are in tests/e2e/full_disk.sh, NaN outputs
# and duplicate zip entries in test_hostile_input and test_dtrb_import.)
set(easy_net ${PROJECT_SOURCE_DIR}/tests/data/easyocr/custom/fixture_net)

# 2. Every file a format reads is an input: `import X.pth --out X.yaml` replaced the EasyOCR yaml
# beside the .pth, and `--yaml F --out F` the one named; refused even with --force.
set(easy_copy "cp '${easy_net}.pth' m.pth && cp '${easy_net}.yaml' m.yaml")
hostile_check(import_over_easyocr_yaml 1 "m.yaml: refusing to write the imported model over an input of this command .it reads .*import_over_easyocr_yaml/m.yaml"
  SETUP "${easy_copy}" AFTER "cmp m.yaml '${easy_net}.yaml'"
  COMMAND ${cli} import ${hw}/import_over_easyocr_yaml/m.pth
  --out ${hw}/import_over_easyocr_yaml/m.yaml --force)
hostile_check(import_over_given_yaml 1 "y.yaml: refusing to write the imported model over an input of this command .it reads .*y.yaml"
  SETUP "cp '${easy_net}.pth' m.pth && cp '${easy_net}.yaml' y.yaml" AFTER "cmp y.yaml '${easy_net}.yaml'"
  COMMAND ${cli} import ${hw}/import_over_given_yaml/m.pth --yaml ${hw}/import_over_given_yaml/y.yaml
  --out ${hw}/import_over_given_yaml/y.yaml)
hostile_check(failures_over_easyocr_yaml 1 "m.yaml: refusing to write the failures file over an input of this command"
  SETUP "${easy_copy}" AFTER "cmp m.yaml '${easy_net}.yaml'"
  COMMAND ${cli} eval --model ${hw}/failures_over_easyocr_yaml/m.pth --data digits:len=5,count=2
  --failures ${hw}/failures_over_easyocr_yaml/m.yaml --force)
# (and the import beside it still writes where it should)
hostile_check(import_beside_easyocr_yaml 0 "wrote .*m.fvm"
  SETUP "${easy_copy}" AFTER "cmp m.yaml '${easy_net}.yaml' && test -s m.fvm"
  COMMAND ${cli} import ${hw}/import_beside_easyocr_yaml/m.pth --out ${hw}/import_beside_easyocr_yaml/m.fvm)

# 5. Invalid UTF-8 in a charset is named where it enters; it reached the JSON writer as
# "internal error: [json.exception.type_error.316]". (The byte is 0x80, a stray continuation.)
hostile_check(init_model_charset_invalid_utf8 1 "--charset is not valid UTF-8 .byte 3, 0x80."
  SETUP "printf 'ab\\200c' > cs" AFTER "test ! -e m.fvm"
  COMMAND sh -c "cd init_model_charset_invalid_utf8 && exec \"$0\" init-model --attention soft --width 0.125 --charset \"$(cat cs)\" --out m.fvm"
  ${cli} PROPERTIES FAIL_REGULAR_EXPRESSION "internal error")
set(bad_yaml "cp '${easy_net}.pth' m.pth && (printf 'character_list: \\200' && sed -n '1s/^character_list: 0//p' '${easy_net}.yaml' && sed 1d '${easy_net}.yaml') > m.yaml")
hostile_check(import_yaml_charset_invalid_utf8 1 "m.pth: character_list of .*m.yaml is not valid UTF-8 .byte 1, 0x80."
  SETUP "${bad_yaml}" AFTER "test ! -e m.fvm"
  COMMAND ${cli} import ${hw}/import_yaml_charset_invalid_utf8/m.pth
  --out ${hw}/import_yaml_charset_invalid_utf8/m.fvm PROPERTIES FAIL_REGULAR_EXPRESSION "internal error")
hostile_check(trace_yaml_charset_invalid_utf8 1 "m.pth: character_list of .*m.yaml is not valid UTF-8"
  SETUP "${bad_yaml}"
  COMMAND ${cli} trace --model ${hw}/trace_yaml_charset_invalid_utf8/m.pth --json ${pgm}
  PROPERTIES FAIL_REGULAR_EXPRESSION "internal error")

# 6. Tesseract's messages. An engine has no network: explain, --faithfulness, bench and import
# say so before starting it (they said "charset is empty" or "cannot open model file").
hostile_check(explain_engine 1 "tesseract:eng: an engine has no gradients to explain"
  COMMAND ${cli} explain --model tesseract:eng ${pgm})
hostile_check(faithfulness_engine 1 "tesseract:eng: an engine has no gradients to explain"
  COMMAND ${cli} eval --model tesseract:eng --faithfulness --data digits:len=5,count=2)
hostile_check(bench_engine 1 "tesseract:eng: an engine, not a model file: nothing to import"
  COMMAND ${cli} bench --model tesseract:eng --repeats 1)
hostile_check(bench_explain_engine 1 "tesseract:eng: an engine has no gradients to explain"
  COMMAND ${cli} bench --model tesseract:eng --explain ${pgm} --repeats 1)
hostile_check(import_engine 1 "tesseract:eng: an engine, not a model file: nothing to import"
  AFTER "test ! -e x.fvm" COMMAND ${cli} import tesseract:eng --out ${hw}/import_engine/x.fvm)
# psm 0 and 2 read no text (they were accepted and read nothing).
hostile_check(tesseract_psm_0 1 "psm=0 detects orientation and script only and reads no text"
  COMMAND ${cli} trace --model tesseract:eng,psm=0 ${pgm})
hostile_check(tesseract_psm_2 1 "psm=2 segments the page without reading it"
  COMMAND ${cli} eval --model tesseract:eng,psm=2 --data digits:len=5,count=2)
get_property(foveal_have_tesseract GLOBAL PROPERTY FOVEAL_HAVE_TESSERACT)
if(foveal_have_tesseract)
  # A language Tesseract cannot load among others: refused, naming it (read with eng alone,
  # exit 0, before).
  hostile_check(tesseract_eng_plus_nope 1 "tesseract:eng.nope,psm=7: Tesseract cannot load the language 'nope' .no nope.traineddata in "
    COMMAND ${cli} trace --model tesseract:eng+nope ${pgm})
  # A traineddata that is there but broken is named as such (it was reported missing).
  hostile_check(tesseract_empty_traineddata 1 "tesseract_empty_traineddata/xx.traineddata is an empty file, not a traineddata file"
    SETUP ": > xx.traineddata" COMMAND ${cli} trace --model tesseract:xx ${pgm}
    PROPERTIES ENVIRONMENT "TESSDATA_PREFIX=${hw}/tesseract_empty_traineddata")
  hostile_check(tesseract_dir_traineddata 1 "xx.traineddata is a directory, not a traineddata file"
    SETUP "mkdir xx.traineddata" COMMAND ${cli} trace --model tesseract:xx ${pgm}
    PROPERTIES ENVIRONMENT "TESSDATA_PREFIX=${hw}/tesseract_dir_traineddata")
  hostile_check(tesseract_corrupt_traineddata 1 "xx.traineddata .4096 bytes. is corrupt or not a traineddata file"
    SETUP "head -c 4096 /dev/urandom > xx.traineddata" COMMAND ${cli} trace --model tesseract:xx ${pgm}
    PROPERTIES ENVIRONMENT "TESSDATA_PREFIX=${hw}/tesseract_corrupt_traineddata")
endif()

# 9. A JPEG cut short and closed again by an end marker decoded through OpenCV without a word
# (the marker is there, so round three's check passed it): libjpeg's warning, in trace (and the
# window, through the same readImageWarning) and refused by the data commands.
if(FOVEAL_WITH_OPENCV)
  set(closed_jpeg "(head -c 2900 '${PROJECT_SOURCE_DIR}/tests/data/dtrb/img05_400x50_rgb.jpg' && printf '\\377\\331') > closed.jpg")
  hostile_check(trace_closed_truncated_jpeg 0 "warning: .*closed.jpg: truncated or damaged JPEG .libjpeg: Corrupt JPEG data: premature end of data segment"
    SETUP "${closed_jpeg}" COMMAND ${cli} trace --model ${soft_model} ${hw}/trace_closed_truncated_jpeg/closed.jpg)
  hostile_check(eval_closed_truncated_jpeg 1 "line 2 \\(closed.jpg\\): .*truncated or damaged JPEG"
    SETUP "${closed_jpeg} && cp '${pgm}' a.pgm && printf 'a.pgm\\t46214\\nclosed.jpg\\t12345\\n' > gt.txt"
    COMMAND ${cli} eval --model ${soft_model} --data ${hw}/eval_closed_truncated_jpeg)
endif()

# 11. Lenient readers. EasyOCR: a character listed twice in --character (a yaml's list may repeat
# one, as EasyOCR's own lists do, and is read by EasyOCR's rule), network_params on one line as a
# list, a directory where the yaml would be; --easyocr NAME not used when the yaml names the
# characters.
hostile_check(import_easyocr_repeated_character 1 "m.pth: --character names 'a' more than once"
  SETUP "${easy_copy}" AFTER "test ! -e m.fvm"
  COMMAND ${cli} import ${hw}/import_easyocr_repeated_character/m.pth --character "0123456789abcdefghijklmnopqrstuvwxya -'"
  --out ${hw}/import_easyocr_repeated_character/m.fvm)
hostile_check(import_easyocr_params_list 1 "m.yaml:[0-9]+: network_params is a list"
  SETUP "cp '${easy_net}.pth' m.pth && sed '/^network_params:/,$d' '${easy_net}.yaml' > m.yaml && echo 'network_params: [16, 1, 32]' >> m.yaml"
  COMMAND ${cli} import ${hw}/import_easyocr_params_list/m.pth --out ${hw}/import_easyocr_params_list/m.fvm)
hostile_check(import_easyocr_params_flow 1 "says network_params.hidden_size 17, but the file's SequenceModeling gives 16"
  SETUP "cp '${easy_net}.pth' m.pth && sed '/^network_params:/,$d' '${easy_net}.yaml' > m.yaml && echo 'network_params: {hidden_size: 17, input_channel: 1}' >> m.yaml"
  COMMAND ${cli} import ${hw}/import_easyocr_params_flow/m.pth --out ${hw}/import_easyocr_params_flow/m.fvm)
hostile_check(import_easyocr_yaml_directory 1 "m.yaml: cannot read EasyOCR network yaml .a directory"
  SETUP "cp '${easy_net}.pth' m.pth && mkdir m.yaml"
  COMMAND ${cli} import ${hw}/import_easyocr_yaml_directory/m.pth --out ${hw}/import_easyocr_yaml_directory/m.fvm)
hostile_check(import_easyocr_named_and_yaml 0 "assumed: --easyocr english_g2 not used for the characters: character_list of .*m.yaml names them"
  SETUP "${easy_copy}"
  COMMAND ${cli} import ${hw}/import_easyocr_named_and_yaml/m.pth --easyocr english_g2 --out ${hw}/import_easyocr_named_and_yaml/m.fvm)
# strhub: hyper_parameters that is not a dictionary was read as absent ("no hyper-parameters");
# the checkpoint written by torch.save from the PARSeq fixture's weights. --max_label_length was
# not read for PARSeq, so a word passed.
set(parseq_dir ${PROJECT_SOURCE_DIR}/tests/data/parseq)
if(EXISTS /usr/lib/python3/dist-packages/torch/__init__.py)
  hostile_check(strhub_hyper_parameters_list 1 "h.ckpt: the checkpoint's hyper_parameters is a pickled list, not a dictionary"
    SETUP "/usr/bin/python3 -c \"(lambda T: T.save({'state_dict': {'model.' + k: v for k, v in T.load('${parseq_dir}/parseq_small.pt').items()}, 'hyper_parameters': ['charset_train', '0123']}, 'h.ckpt'))(__import__('torch'))\""
    COMMAND ${cli} info --model ${hw}/strhub_hyper_parameters_list/h.ckpt)
endif()
hostile_check(strhub_max_label_length_word 1 "parseq_small.pt: --max_label_length must be a whole number in \\[1, 1000\\] .got 'many'"
  COMMAND ${cli} trace --model ${parseq_dir}/parseq_small.pt --max_label_length many ${parseq_dir}/img02_160x48.png)
# explain --tokens with the attention method: refused (it was ignored).
hostile_check(explain_attention_tokens 2 "--tokens goes with --method ig, not --method attention"
  COMMAND ${cli} explain --model ${soft_model} --method attention --tokens ${pgm})

# 8. Control characters in a reading (a charset may hold them: "a BEL b ESC c" here, read by a
# model with random weights, which reads them) vanished from ALTO, PAGE and hOCR (CONTENT="");
# they are U+FFFD, counted on stderr, and the documents stay valid XML.
set(control_model "'${cli}' init-model --attention soft --width 0.125 --seed 2 --charset \"$(printf 'a\\007b\\033c')\" --out m.fvm >/dev/null")
hostile_check(trace_control_characters_xml 0 "warning: .*digits-46214.pgm: [0-9]+ control characters? of the reading.* written as U.FFFD"
  SETUP "${control_model}"
  AFTER "grep -q \"$(printf '\\357\\277\\275')\" o/trace.alto.xml && ! grep -q \"$(printf '\\007')\" o/trace.alto.xml o/trace.page.xml o/trace.hocr && ( ! command -v xmllint >/dev/null || xmllint --noout o/trace.alto.xml o/trace.page.xml o/trace.hocr )"
  COMMAND ${cli} trace --model ${hw}/trace_control_characters_xml/m.fvm --out ${hw}/trace_control_characters_xml/o ${pgm})
