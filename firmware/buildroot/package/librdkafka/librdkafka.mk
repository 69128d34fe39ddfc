################################################################################
#
# librdkafka
#
################################################################################

LIBRDKAFKA_VERSION = 2.15.0
LIBRDKAFKA_SITE = $(call github,confluentinc,librdkafka,v$(LIBRDKAFKA_VERSION))
LIBRDKAFKA_LICENSE = BSD-2-Clause
LIBRDKAFKA_LICENSE_FILES = LICENSE
LIBRDKAFKA_INSTALL_STAGING = YES
LIBRDKAFKA_DEPENDENCIES = host-pkgconf

LIBRDKAFKA_CONF_OPTS = \
	-DRDKAFKA_BUILD_STATIC=OFF \
	-DRDKAFKA_BUILD_EXAMPLES=OFF \
	-DRDKAFKA_BUILD_TESTS=OFF \
	-DWITH_SASL=OFF

# Its CMake turns each feature on when it finds the library, including on the
# build host: decide each one here from the configuration instead.
# WITH_SASL means Cyrus SASL (GSSAPI), which Buildroot lacks; its CMake then
# leaves SCRAM and OAUTHBEARER off, though they need only OpenSSL: ask for them
# directly (checked with v2.15.0: "build options: PLAIN SASL_SCRAM OAUTHBEARER").
ifeq ($(BR2_PACKAGE_OPENSSL),y)
LIBRDKAFKA_DEPENDENCIES += openssl
LIBRDKAFKA_CONF_OPTS += -DWITH_SSL=ON -DWITH_SASL_SCRAM=ON -DWITH_SASL_OAUTHBEARER=ON
else
LIBRDKAFKA_CONF_OPTS += -DWITH_SSL=OFF
endif

ifeq ($(BR2_PACKAGE_ZLIB),y)
LIBRDKAFKA_DEPENDENCIES += zlib
LIBRDKAFKA_CONF_OPTS += -DWITH_ZLIB=ON
else
LIBRDKAFKA_CONF_OPTS += -DWITH_ZLIB=OFF
endif

ifeq ($(BR2_PACKAGE_ZSTD),y)
LIBRDKAFKA_DEPENDENCIES += zstd
LIBRDKAFKA_CONF_OPTS += -DWITH_ZSTD=ON
else
LIBRDKAFKA_CONF_OPTS += -DWITH_ZSTD=OFF
endif

# Without the external lz4, librdkafka builds its bundled copy.
ifeq ($(BR2_PACKAGE_LZ4),y)
LIBRDKAFKA_DEPENDENCIES += lz4
LIBRDKAFKA_CONF_OPTS += -DENABLE_LZ4_EXT=ON
else
LIBRDKAFKA_CONF_OPTS += -DENABLE_LZ4_EXT=OFF
endif

ifeq ($(BR2_PACKAGE_LIBCURL),y)
LIBRDKAFKA_DEPENDENCIES += libcurl
LIBRDKAFKA_CONF_OPTS += -DWITH_CURL=ON
else
LIBRDKAFKA_CONF_OPTS += -DWITH_CURL=OFF
endif

$(eval $(cmake-package))
