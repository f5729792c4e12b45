#!/bin/sh
# Runs a rank's command; rank $GA_TEST_STOP_RANK stops itself (SIGSTOP) $GA_TEST_STOP_AFTER seconds in: alive,
# silent, answering nothing, as a rank stuck in a hung driver or a frozen node looks to the others.
if [ "${OMPI_COMM_WORLD_RANK:-}" = "${GA_TEST_STOP_RANK:-1}" ]; then
    (sleep "${GA_TEST_STOP_AFTER:-2}"; kill -STOP $$) &
fi
exec "$@"
