SUMMARY = "Kafka source connector for edge devices"
DESCRIPTION = "skiff tails log files and polls SQLite databases on a gateway, \
produces their records to Apache Kafka and keeps source offsets in a \
crash-safe local file. It reads Kafka Connect's property names from \
/etc/skiff/skiff.properties and runs as the systemd unit skiff.service."
SECTION = "net"

# No licence has been chosen yet. When one is, set LICENSE and
# LIC_FILES_CHKSUM = "file://LICENSE;md5=..." instead.
LICENSE = "CLOSED"

# librdkafka is in meta-oe (meta-openembedded), cjson and libmicrohttpd too;
# sqlite3, zlib and gnutls in oe-core.
DEPENDS = "librdkafka cjson sqlite3 zlib libmicrohttpd gnutls"
# skiff dlopen()s libmicrohttpd when the REST API is on (listeners=), GnuTLS
# for an https listener, and SQLite when a SQLite source is opened, so no
# shared-library dependency names them: the package must.
RDEPENDS:${PN} += "libmicrohttpd gnutls libsqlite3"

# Set SKIFF_GIT_URI in local.conf or a bbappend to where the skiff repository
# is served; for development from a checkout use externalsrc instead:
#   INHERIT += "externalsrc"
#   EXTERNALSRC:pn-skiff = "/path/to/skiff"
SKIFF_GIT_URI ??= "git://git.example.org/skiff.git;protocol=https"
SKIFF_GIT_BRANCH ??= "main"
SRC_URI = "${SKIFF_GIT_URI};branch=${SKIFF_GIT_BRANCH}"
# Pin a commit for reproducible images; AUTOREV follows the branch.
SRCREV ?= "${AUTOREV}"

# Written for Scarthgap (5.0 LTS). Kirkstone (4.0): PV = "0.1.0+git${SRCPV}".
# Styhead (5.1): S = "${UNPACKDIR}/git". Walnascar (5.2) and later: drop S.
PV = "0.1.0+git"
S = "${WORKDIR}/git"

inherit cmake pkgconfig systemd useradd

EXTRA_OECMAKE = "-DSKIFF_TESTS=OFF -DSKIFF_SANITIZE=OFF"

# The unit runs as User=skiff with SupplementaryGroups=adm (base-passwd
# provides adm). StateDirectory= creates /var/lib/skiff at start.
USERADD_PACKAGES = "${PN}"
USERADD_PARAM:${PN} = "--system --user-group --no-create-home \
    --home-dir ${localstatedir}/lib/skiff --shell ${base_sbindir}/nologin skiff"

SYSTEMD_SERVICE:${PN} = "skiff.service"
SYSTEMD_AUTO_ENABLE:${PN} = "enable"

do_install:append() {
    install -d ${D}${systemd_system_unitdir}
    install -m 0644 ${S}/firmware/systemd/skiff.service ${D}${systemd_system_unitdir}/
    sed -i -e 's,/usr/bin/skiff,${bindir}/skiff,' \
        -e 's,/etc/skiff/,${sysconfdir}/skiff/,' \
        ${D}${systemd_system_unitdir}/skiff.service

    # May hold SASL credentials: readable by the skiff group only. useradd.bbclass
    # has created the group in the sysroot, so chgrp works under pseudo.
    install -d ${D}${sysconfdir}/skiff
    install -m 0640 ${S}/firmware/etc/skiff.properties ${D}${sysconfdir}/skiff/
    chgrp skiff ${D}${sysconfdir}/skiff/skiff.properties
}

# Kept across package upgrades when edited on the device. A product's real
# config belongs in a bbappend of this recipe (SRC_URI += "file://skiff.properties"
# and an install over this one).
CONFFILES:${PN} = "${sysconfdir}/skiff/skiff.properties"
