"""The site's one date format (FORMAT_MODULE_PATH): ISO dates and 24-hour times, the same in every
page, table and export, whatever the language; templates say ``|date:"DATETIME_FORMAT"``."""

DATE_FORMAT = "Y-m-d"
TIME_FORMAT = "H:i"
DATETIME_FORMAT = "Y-m-d H:i"
SHORT_DATE_FORMAT = DATE_FORMAT
SHORT_DATETIME_FORMAT = DATETIME_FORMAT
YEAR_MONTH_FORMAT = "Y-m"
MONTH_DAY_FORMAT = "m-d"
FIRST_DAY_OF_WEEK = 1  # Monday
