# Writes version.cc (cmake -P, at configure time and at every build) from
# version.cc.in with the project version and the git revision of SOURCE_DIR.
# configure_file leaves the file untouched when its text is the same, so only
# a new commit (or a checkout turning dirty or clean) recompiles it.
#   -DSOURCE_DIR=... -DVERSION=0.4.0 -DGIT=/usr/bin/git (may be empty)
#   -DIN=.../version.cc.in -DOUT=.../version.cc
set(ENCODER_VERSION "${VERSION}")
set(ENCODER_REVISION "unknown")
if(GIT)
  # Only when SOURCE_DIR is the top of a checkout: a source tree copied into
  # another repository (or a container build without .git) is not its commit.
  execute_process(COMMAND "${GIT}" -C "${SOURCE_DIR}" rev-parse --show-toplevel HEAD
    OUTPUT_VARIABLE git_out ERROR_QUIET RESULT_VARIABLE git_failed
    OUTPUT_STRIP_TRAILING_WHITESPACE)
  if(NOT git_failed)
    string(REPLACE "\n" ";" git_lines "${git_out}")
    list(GET git_lines 0 top)
    list(GET git_lines 1 commit)
    file(REAL_PATH "${top}" top)
    file(REAL_PATH "${SOURCE_DIR}" source)
    if(top STREQUAL source)
      set(ENCODER_REVISION "${commit}")
      string(SUBSTRING "${commit}" 0 7 short)
      string(APPEND ENCODER_VERSION "+g${short}")
      # Tracked files changed; --no-optional-locks: never write the index
      # (a build must not contend with the user's git commands).
      execute_process(COMMAND "${GIT}" --no-optional-locks -C "${SOURCE_DIR}" status
          --porcelain --untracked-files=no
        OUTPUT_VARIABLE changes ERROR_QUIET RESULT_VARIABLE status_failed)
      if(NOT status_failed AND NOT changes STREQUAL "")
        string(APPEND ENCODER_VERSION "-dirty")
      endif()
    endif()
  endif()
endif()
configure_file("${IN}" "${OUT}" @ONLY)
