// SPDX-License-Identifier: GPL-2.0-only
/*
 * module_attribute_const: a module attribute's show() takes a const
 * struct module_attribute.
 * Changed in: 6.14
 */
#include <linux/module.h>
#include <linux/sysfs.h>

#ifdef RNBD_PROBE_NEW
static ssize_t rnbd_probe_show(const struct module_attribute *attr,
			       struct module_kobject *mk, char *buf)
#else
static ssize_t rnbd_probe_show(struct module_attribute *attr,
			       struct module_kobject *mk, char *buf)
#endif
{
	return 0;
}

struct module_attribute rnbd_probe_attr = __ATTR(rnbd_probe, 0444,
						  rnbd_probe_show, NULL);
