#include "device.h"

#include <stdarg.h>
#include <stdio.h>

void device_fail(const struct device_core *core, const char *fmt, ...)
{
	char message[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(message, sizeof message, fmt, ap);
	va_end(ap);
	core->fail(core->core, message);
}
