################################################################################
#
# skiff
#
################################################################################

# Built from the checkout this br2-external tree lives in (firmware/buildroot
# inside the skiff repository). For a release build from git instead:
#   SKIFF_VERSION = <tag or commit>
#   SKIFF_SITE = <git URL of skiff>
#   SKIFF_SITE_METHOD = git
# and add a skiff.hash file beside this one.
SKIFF_VERSION = local
SKIFF_SITE = $(BR2_EXTERNAL_SKIFF_PATH)/../..
SKIFF_SITE_METHOD = local
# No licence chosen yet; update with the project's (and drop REDISTRIBUTE,
# which keeps `make legal-info` from copying the source meanwhile).
SKIFF_LICENSE = PROPRIETARY
SKIFF_REDISTRIBUTE = NO
SKIFF_DEPENDENCIES = host-pkgconf librdkafka cjson sqlite zlib libmicrohttpd gnutls
SKIFF_CONF_OPTS = -DSKIFF_TESTS=OFF -DSKIFF_SANITIZE=OFF

# skiff's system user; the unit adds the adm group (SupplementaryGroups=adm),
# which Buildroot's skeleton has (gid 4).
define SKIFF_USERS
	skiff -1 skiff -1 * /var/lib/skiff - - skiff Kafka source connector
endef

# The sample config. A board's real one comes from its rootfs overlay
# (BR2_ROOTFS_OVERLAY), which is copied over the target after this.
# 0640 root:skiff: it may hold SASL credentials.
define SKIFF_INSTALL_CONFIG
	$(INSTALL) -D -m 0640 $(@D)/firmware/etc/skiff.properties \
		$(TARGET_DIR)/etc/skiff/skiff.properties
endef
SKIFF_POST_INSTALL_TARGET_HOOKS += SKIFF_INSTALL_CONFIG

define SKIFF_PERMISSIONS
	/etc/skiff/skiff.properties f 0640 root skiff - - - - -
endef

# Buildroot runs `systemctl preset-all` on the target, which enables units with
# an [Install] section.
define SKIFF_INSTALL_INIT_SYSTEMD
	$(INSTALL) -D -m 0644 $(@D)/firmware/systemd/skiff.service \
		$(TARGET_DIR)/usr/lib/systemd/system/skiff.service
endef

$(eval $(cmake-package))
