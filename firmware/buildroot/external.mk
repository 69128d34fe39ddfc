include $(sort $(wildcard $(BR2_EXTERNAL_SKIFF_PATH)/package/*/*.mk))
