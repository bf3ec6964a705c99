# The start of every package-operation test (sourced first): the programs
# under test, libtest.sh, and gl_pkg_env.  librepo.sh (the signed test
# repository) comes after it where a test needs one.
# SPDX-License-Identifier: LGPL-2.1-or-later

: "${GLIMPSE:?set GLIMPSE to the built glimpse}"
: "${GLIMPSE_PKGNS:?set GLIMPSE_PKGNS to the built glimpse-pkgns}"
: "${GLIMPSE_REMOVE_TRASH:?set GLIMPSE_REMOVE_TRASH to the built glimpse-remove-trash}"
# shellcheck source=../launcher/libtest.sh
source "$(dirname "${BASH_SOURCE[0]}")/../launcher/libtest.sh"

# gl_pkg_env [--profiles] [--cache] [--launcher] [--sandbox NAME]: glimpse's
# environment for the test: the test store and the bundled profiles, and with
#   --profiles  the test's own profiles in $WORK/profiles before them
#   --cache     a download cache in $WORK/cache
#   --launcher  a setuid copy of the launcher (gl_install_setuid); GL_EXTRA_ENV
#               hands the store, the launcher (and --profiles) to `as_user`
#   --sandbox NAME  the test's sandbox: $id is NAME-PID, removed at the end
gl_pkg_env () {
  local profiles=0 launcher=0
  export GLIMPSE_SANDBOX_DIR=$GL_STORE
  export GLIMPSE_PROFILES_PATH=${GLIMPSE_BUNDLED_PROFILES:?}
  while [ $# -gt 0 ]; do
    case $1 in
      --profiles) profiles=1 ;;
      --cache) export GLIMPSE_CACHE_DIR=$WORK/cache ;;
      --launcher) launcher=1 ;;
      --sandbox) id=${2:?gl_pkg_env: --sandbox NAME}-$$; GL_SANDBOXES+=("$id"); shift ;;
      *) echo "Bail out! gl_pkg_env: unknown option $1"; exit 1 ;;
    esac
    shift
  done
  if [ $profiles = 1 ]; then
    mkdir -p "$WORK/profiles"
    GLIMPSE_PROFILES_PATH=$WORK/profiles:$GLIMPSE_PROFILES_PATH
  fi
  if [ $launcher = 1 ]; then
    gl_install_setuid
    export GLIMPSE_LAUNCHER=$LAUNCH
    GL_EXTRA_ENV="GLIMPSE_SANDBOX_DIR=$GL_STORE GLIMPSE_LAUNCHER=$LAUNCH"
    [ $profiles = 0 ] || GL_EXTRA_ENV+=" GLIMPSE_PROFILES_PATH=$GLIMPSE_PROFILES_PATH"
  fi
}
