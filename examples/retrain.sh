#!/bin/sh
# Nightly retraining for cron: train on today's file, keep the deployed model unless the new one is worse.
#
#   retrain.sh TODAY.svm DEPLOYED.model [HOLDOUT.svm]
#
# Trains a new model on TODAY.svm (from DEPLOYED.model's weights with `pegasos train --init` where it is a
# linear binary or regression model, else from scratch, e.g. multiclass; either way with the defaults'
# certificate), evaluates it against DEPLOYED.model on HOLDOUT.svm
# (default TODAY.svm; a held-out file is the fair test), and replaces DEPLOYED.model with it (mv, atomic
# on one file system) only if its accuracy is not lower.  The first run (no DEPLOYED.model yet) deploys.
# Exit status: 0 deployed, 3 the new model was worse (DEPLOYED.model unchanged), else an error.
# Extra train options: PEGASOS_TRAIN_OPTIONS="-l 1e-4"; the command: PEGASOS=/path/to/pegasos.
set -eu
PEGASOS=${PEGASOS:-pegasos}
TRAIN_OPTIONS=${PEGASOS_TRAIN_OPTIONS:-}
if [ $# -lt 2 ] || [ $# -gt 3 ]; then
    echo "usage: $0 TODAY.svm DEPLOYED.model [HOLDOUT.svm]" >&2
    exit 2
fi
today=$1
deployed=$2
holdout=${3:-$1}
new="$deployed.new.$$"                   # next to DEPLOYED: the final mv stays on one file system
trap 'rm -f "$new"' EXIT
trap 'exit 1' HUP INT TERM

# A model `train --init` goes on from: linear, binary classification or regression (pegasos info's task)
resumable() {
    info=$("$PEGASOS" info --json "$1" 2>/dev/null) || return 1
    printf '%s\n' "$info" | grep -q '^  "kind": "linear"' &&
        printf '%s\n' "$info" | grep -Eq '^  "task": "(binary|regression)"'
}

# shellcheck disable=SC2086  # TRAIN_OPTIONS is a list of options
if [ -f "$deployed" ] && resumable "$deployed"; then
    "$PEGASOS" train -q $TRAIN_OPTIONS --init "$deployed" "$today" "$new"
else
    "$PEGASOS" train -q $TRAIN_OPTIONS "$today" "$new"
fi

if [ -f "$deployed" ]; then
    status=0
    "$PEGASOS" eval -q "$holdout" "$new" --compare "$deployed" --fail-if-worse accuracy || status=$?
    if [ "$status" -eq 3 ]; then
        echo "retrain: the new model is worse than $deployed on $holdout; keeping $deployed" >&2
        exit 3
    fi
    [ "$status" -eq 0 ] || exit "$status"
fi
mv -f "$new" "$deployed"
echo "retrain: deployed a model trained on $today as $deployed"
