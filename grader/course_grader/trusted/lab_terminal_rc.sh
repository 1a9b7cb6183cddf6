# Read by each terminal of the grader's `lab` (bash --rcfile; sh through $ENV): the TA's own
# start-up files first, as any interactive shell reads them, then the course's environment first on
# PATH, since a start-up file may set PATH anew (Debian's /etc/profile does, for a login shell).
if [ -n "${BASH_VERSION:-}" ]; then
    [ -r /etc/bash.bashrc ] && . /etc/bash.bashrc
    [ -r "$HOME/.bashrc" ] && . "$HOME/.bashrc"
fi
if [ -n "${COURSE_GRADER_SCRIPTS:-}" ]; then
    PATH="$COURSE_GRADER_SCRIPTS:$PATH"
    export PATH
fi
