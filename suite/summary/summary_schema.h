/* The names and versions of the files the front-end writes and reads back (docs/suite.md). */
#ifndef SUMMARY_SCHEMA_H
#define SUMMARY_SCHEMA_H

#define SUITE_SUMMARY_SCHEMA "gpuaccept-summary"
#define SUITE_SUMMARY_SCHEMA_VERSION 1
#define SUITE_RUN_SCHEMA "gpuaccept-suite-run"
#define SUITE_RUN_SCHEMA_VERSION 2
#define SUITE_REPORT_SCHEMA "gpuaccept-report"

#endif
