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
