// SPDX-License-Identifier: GPL-2.0
/*
 * fg_i2c_devices - FallGuard kernel rig helper.
 *
 * Creates i2c clients for an ADXL345 (0x53) and/or an MPU6050 (0x68) on the
 * i2c-stub SMBus emulator, so that the kernel's real adxl345_i2c and
 * inv-mpu6050-i2c drivers probe without hardware.
 *
 * `echo adxl345 0x53 > .../new_device` is not enough: such a client has no
 * firmware node, device_get_match_data() returns NULL and the adxl345 probe
 * fails (-EINVAL on 6.1, -ENODEV on 6.12). Here each client gets a small
 * firmware node of our own whose only answer is the match data of the bound
 * driver's own table entry (its of_match_table entry for the configured
 * compatible, else its i2c id-table entry); every property lookup answers
 * "no such property", so the drivers take their defaults (identity mount
 * matrix, push-pull active-high interrupt, ...).
 *
 * Optionally a client gets a dummy edge interrupt (an irq descriptor on
 * dummy_irq_chip). A test fires it by writing a count to
 * /sys/kernel/fg_i2c_devices/fire_<chip>; the handler runs in hard interrupt
 * context (irq_work), as a real data-ready line would. With the interrupt the
 * MPU6050 driver registers its buffer and its trigger mpu6050-devN.
 *
 * Parameters (see modinfo): adxl345=1 mpu6050=1 adxl345_addr=0x53
 * mpu6050_addr=0x68 adxl345_irq=0 mpu6050_irq=1 adapter=-1 (auto: the
 * adapter named "SMBus stub driver"). Load i2c-stub with
 * chip_addr=0x53,0x68 first, and preset the identity registers through
 * i2c-dev (ADXL345 DEVID 0x00 = 0xe5, MPU6050 WHO_AM_I 0x75 = 0x68) before
 * the drivers probe.
 *
 * sysfs, /sys/kernel/fg_i2c_devices/:
 *   <chip>_irq     linux irq number given to the client (0: none)
 *   <chip>_client  i2c device name, e.g. 0-0068 (empty: not created)
 *   fire_<chip>    write N (default 1): fire the interrupt N times
 *   fired_<chip>   how many times it has been fired
 */
#include <linux/atomic.h>
#include <linux/fwnode.h>
#include <linux/i2c.h>
#include <linux/interrupt.h>
#include <linux/irq.h>
#include <linux/irq_work.h>
#include <linux/kernel.h>
#include <linux/kobject.h>
#include <linux/mod_devicetable.h>
#include <linux/module.h>
#include <linux/property.h>
#include <linux/string.h>
#include <linux/sysfs.h>

static bool adxl345 = true;
module_param(adxl345, bool, 0444);
MODULE_PARM_DESC(adxl345, "create the ADXL345 client (default 1)");
static bool mpu6050 = true;
module_param(mpu6050, bool, 0444);
MODULE_PARM_DESC(mpu6050, "create the MPU6050 client (default 1)");
static ushort adxl345_addr = 0x53;
module_param(adxl345_addr, ushort, 0444);
MODULE_PARM_DESC(adxl345_addr, "ADXL345 address (0x53 or 0x1d)");
static ushort mpu6050_addr = 0x68;
module_param(mpu6050_addr, ushort, 0444);
MODULE_PARM_DESC(mpu6050_addr, "MPU6050 address (0x68 or 0x69)");
static bool adxl345_irq;
module_param(adxl345_irq, bool, 0444);
MODULE_PARM_DESC(adxl345_irq, "give the ADXL345 a fireable interrupt (default 0)");
static bool mpu6050_irq = true;
module_param(mpu6050_irq, bool, 0444);
MODULE_PARM_DESC(mpu6050_irq, "give the MPU6050 a fireable interrupt (default 1)");
static int adapter = -1;
module_param(adapter, int, 0444);
MODULE_PARM_DESC(adapter, "i2c adapter number (-1: the i2c-stub adapter)");

struct fg_dev {
	const char *type;		/* i2c id-table name */
	const char *compatible;		/* of_match_table entry to answer */
	bool *enabled;
	ushort *addr;
	bool *want_irq;
	struct fwnode_handle fwnode;
	struct i2c_client *client;
	int irq;
	struct irq_work work;
	atomic_t pending;
	atomic_t fired;
};

static void fg_fire_work(struct irq_work *work);

static struct fg_dev fg_devs[] = {
	{ .type = "adxl345", .compatible = "adi,adxl345",
	  .enabled = &adxl345, .addr = &adxl345_addr, .want_irq = &adxl345_irq },
	{ .type = "mpu6050", .compatible = "invensense,mpu6050",
	  .enabled = &mpu6050, .addr = &mpu6050_addr, .want_irq = &mpu6050_irq },
};

static struct fg_dev *fwnode_to_fg(const struct fwnode_handle *fwnode)
{
	return container_of(fwnode, struct fg_dev, fwnode);
}

/* ---- the firmware node ------------------------------------------------ */

static const void *fg_get_match_data(const struct fwnode_handle *fwnode,
				     const struct device *dev)
{
	const struct fg_dev *fg = fwnode_to_fg(fwnode);
	const struct i2c_driver *drv;
	const struct of_device_id *of;
	const struct i2c_device_id *id;

	if (!dev->driver)
		return NULL;
	/* the driver's own OF table entry for our compatible, if it has one */
	for (of = dev->driver->of_match_table; of && of->compatible[0]; of++)
		if (!strcmp(of->compatible, fg->compatible))
			return of->data;
	/* else its i2c id-table entry for the client name */
	drv = to_i2c_driver(dev->driver);
	for (id = drv->id_table; id && id->name[0]; id++)
		if (!strcmp(id->name, fg->type))
			return (const void *)id->driver_data;
	return NULL;
}

static bool fg_property_present(const struct fwnode_handle *fwnode,
				const char *propname)
{
	return false;
}

static int fg_property_read_int_array(const struct fwnode_handle *fwnode,
				      const char *propname,
				      unsigned int elem_size, void *val,
				      size_t nval)
{
	return -EINVAL;
}

static int fg_property_read_string_array(const struct fwnode_handle *fwnode,
					 const char *propname,
					 const char **val, size_t nval)
{
	return -EINVAL;
}

static const char *fg_get_name(const struct fwnode_handle *fwnode)
{
	return fwnode_to_fg(fwnode)->type;
}

static const char *fg_get_name_prefix(const struct fwnode_handle *fwnode)
{
	return "/";
}

static const struct fwnode_operations fg_fwnode_ops = {
	.device_get_match_data = fg_get_match_data,
	.property_present = fg_property_present,
	.property_read_int_array = fg_property_read_int_array,
	.property_read_string_array = fg_property_read_string_array,
	.get_name = fg_get_name,
	.get_name_prefix = fg_get_name_prefix,
};

/* ---- the interrupt ---------------------------------------------------- */

static void fg_fire_work(struct irq_work *work)
{
	struct fg_dev *fg = container_of(work, struct fg_dev, work);

	/* hard irq context, like a real interrupt line */
	generic_handle_irq(fg->irq);
	atomic_inc(&fg->fired);
	if (atomic_dec_return(&fg->pending) > 0)
		irq_work_queue(&fg->work);
}

static int fg_irq_create(struct fg_dev *fg)
{
	int irq = irq_alloc_desc(NUMA_NO_NODE);

	if (irq < 0)
		return irq;
	irq_set_chip_and_handler_name(irq, &dummy_irq_chip, handle_simple_irq,
				      fg->type);
	irq_modify_status(irq, IRQ_NOREQUEST | IRQ_NOPROBE | IRQ_NOAUTOEN, 0);
	fg->irq = irq;
	fg->work = IRQ_WORK_INIT_HARD(fg_fire_work);
	atomic_set(&fg->pending, 0);
	atomic_set(&fg->fired, 0);
	return 0;
}

static void fg_irq_destroy(struct fg_dev *fg)
{
	if (fg->irq <= 0)
		return;
	atomic_set(&fg->pending, 0);
	irq_work_sync(&fg->work);
	irq_set_chip_and_handler(fg->irq, NULL, NULL);
	irq_free_desc(fg->irq);
	fg->irq = 0;
}

/* ---- sysfs ------------------------------------------------------------ */

static struct kobject *fg_kobj;
/* held while our clients exist, so that i2c-stub cannot go away under them */
static struct i2c_adapter *fg_adap;

static struct fg_dev *fg_from_attr(struct kobj_attribute *attr)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(fg_devs); i++)
		if (strstr(attr->attr.name, fg_devs[i].type))
			return &fg_devs[i];
	return NULL;
}

static ssize_t irq_show(struct kobject *k, struct kobj_attribute *a, char *buf)
{
	return sysfs_emit(buf, "%d\n", fg_from_attr(a)->irq);
}

static ssize_t client_show(struct kobject *k, struct kobj_attribute *a, char *buf)
{
	struct fg_dev *fg = fg_from_attr(a);

	return sysfs_emit(buf, "%s\n", fg->client ? dev_name(&fg->client->dev) : "");
}

static ssize_t fired_show(struct kobject *k, struct kobj_attribute *a, char *buf)
{
	return sysfs_emit(buf, "%d\n", atomic_read(&fg_from_attr(a)->fired));
}

static ssize_t fire_store(struct kobject *k, struct kobj_attribute *a,
			  const char *buf, size_t len)
{
	struct fg_dev *fg = fg_from_attr(a);
	unsigned int n = 1;

	if (fg->irq <= 0)
		return -ENODEV;
	if (len && buf[0] != '\n' && kstrtouint(buf, 0, &n))
		return -EINVAL;
	if (!n)
		return len;
	/* the work item re-queues itself while fires are pending */
	if (atomic_add_return(n, &fg->pending) == n)
		irq_work_queue(&fg->work);
	return len;
}

#define FG_ATTRS(chip)							\
	static struct kobj_attribute chip##_irq_attr =			\
		__ATTR(chip##_irq, 0444, irq_show, NULL);		\
	static struct kobj_attribute chip##_client_attr =		\
		__ATTR(chip##_client, 0444, client_show, NULL);		\
	static struct kobj_attribute fired_##chip##_attr =		\
		__ATTR(fired_##chip, 0444, fired_show, NULL);		\
	static struct kobj_attribute fire_##chip##_attr =		\
		__ATTR(fire_##chip, 0200, NULL, fire_store)

FG_ATTRS(adxl345);
FG_ATTRS(mpu6050);

static struct attribute *fg_attrs[] = {
	&adxl345_irq_attr.attr, &adxl345_client_attr.attr,
	&fired_adxl345_attr.attr, &fire_adxl345_attr.attr,
	&mpu6050_irq_attr.attr, &mpu6050_client_attr.attr,
	&fired_mpu6050_attr.attr, &fire_mpu6050_attr.attr,
	NULL,
};

static const struct attribute_group fg_group = { .attrs = fg_attrs };

/* ---- clients ---------------------------------------------------------- */

static int fg_find_stub(struct device *dev, void *data)
{
	struct i2c_adapter *adap = i2c_verify_adapter(dev);

	if (adap && !strcmp(adap->name, "SMBus stub driver")) {
		*(int *)data = adap->nr;
		return 1;
	}
	return 0;
}

static void fg_remove_all(void)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(fg_devs); i++) {
		struct fg_dev *fg = &fg_devs[i];

		if (fg->client) {
			i2c_unregister_device(fg->client);
			fg->client = NULL;
		}
		fg_irq_destroy(fg);
	}
}

static int __init fg_init(void)
{
	struct i2c_adapter *adap;
	int nr = adapter, ret = 0;
	size_t i;

	if (nr < 0 && !i2c_for_each_dev(&nr, fg_find_stub))
		nr = -1;
	if (nr < 0) {
		pr_err("fg_i2c_devices: no i2c-stub adapter (modprobe i2c-stub chip_addr=0x53,0x68 first)\n");
		return -ENODEV;
	}
	adap = i2c_get_adapter(nr);
	if (!adap) {
		pr_err("fg_i2c_devices: no i2c adapter %d\n", nr);
		return -ENODEV;
	}

	for (i = 0; i < ARRAY_SIZE(fg_devs); i++) {
		struct fg_dev *fg = &fg_devs[i];
		struct i2c_board_info info = {};
		struct i2c_client *client;

		if (!*fg->enabled)
			continue;
		memset(&fg->fwnode, 0, sizeof(fg->fwnode));
		fwnode_init(&fg->fwnode, &fg_fwnode_ops);
		if (*fg->want_irq) {
			ret = fg_irq_create(fg);
			if (ret) {
				pr_err("fg_i2c_devices: %s: no irq descriptor: %d\n", fg->type, ret);
				goto fail;
			}
		}
		strscpy(info.type, fg->type, sizeof(info.type));
		info.addr = *fg->addr;
		info.fwnode = &fg->fwnode;
		info.irq = fg->irq;
		client = i2c_new_client_device(adap, &info);
		if (IS_ERR(client)) {
			ret = PTR_ERR(client);
			pr_err("fg_i2c_devices: %s at 0x%02x on i2c-%d: %d\n",
			       fg->type, info.addr, nr, ret);
			goto fail;
		}
		fg->client = client;
		pr_info("fg_i2c_devices: %s at 0x%02x on i2c-%d as %s, irq %d\n",
			fg->type, info.addr, nr, dev_name(&client->dev), fg->irq);
	}

	fg_kobj = kobject_create_and_add("fg_i2c_devices", kernel_kobj);
	if (!fg_kobj) {
		ret = -ENOMEM;
		goto fail;
	}
	ret = sysfs_create_group(fg_kobj, &fg_group);
	if (ret) {
		kobject_put(fg_kobj);
		fg_kobj = NULL;
		goto fail;
	}
	fg_adap = adap;
	return 0;

fail:
	fg_remove_all();
	i2c_put_adapter(adap);
	return ret;
}

static void __exit fg_exit(void)
{
	if (fg_kobj) {
		sysfs_remove_group(fg_kobj, &fg_group);
		kobject_put(fg_kobj);
	}
	fg_remove_all();
	i2c_put_adapter(fg_adap);
}

module_init(fg_init);
module_exit(fg_exit);
MODULE_DESCRIPTION("FallGuard kernel rig: i2c-stub sensors with match data and a fireable interrupt");
MODULE_LICENSE("GPL");
