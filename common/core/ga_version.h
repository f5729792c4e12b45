/* The suite's version (the project's, from CMake), one answer for every program, report and verb. */
#ifndef GA_VERSION_H
#define GA_VERSION_H

const char *ga_version(void);

#endif
