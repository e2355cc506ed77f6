#pragma once

// Calendar arithmetic shared by the temporal kernels: days since 1970-01-01 <-> (year, month, day)
// in the proleptic Gregorian calendar, by Howard Hinnant's civil_from_days / days_from_civil
// (http://howardhinnant.github.io/date_algorithms.html), exact for every int64 day count whose year
// fits in int64.

#include <algorithm>
#include <cstdint>

namespace ketch::temporal {

/// a / b rounded towards negative infinity (b > 0): the day of a negative timestamp.
inline int64_t FloorDiv(int64_t a, int64_t b) {
  int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}

struct CivilDate {
  int64_t year;
  int64_t month;  ///< 1..12
  int64_t day;    ///< 1..31
};

inline CivilDate CivilFromDays(int64_t z) {
  z += 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const int64_t doe = z - era * 146097;
  const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const int64_t mp = (5 * doy + 2) / 153;
  const int64_t day = doy - (153 * mp + 2) / 5 + 1;
  const int64_t month = mp < 10 ? mp + 3 : mp - 9;
  return {yoe + era * 400 + (month <= 2 ? 1 : 0), month, day};
}

inline int64_t DaysFromCivil(int64_t year, int64_t month, int64_t day) {
  year -= month <= 2 ? 1 : 0;
  const int64_t era = (year >= 0 ? year : year - 399) / 400;
  const int64_t yoe = year - era * 400;
  const int64_t doy = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

inline int64_t DaysInMonth(int64_t year, int64_t month) {
  static constexpr int64_t kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
  return month == 2 && leap ? 29 : kDays[month - 1];
}

/// The day `months` calendar months after `date` (whose year*12+month-1 is `month_index`), its
/// day of month clamped to the target month's last day (Jan 31 + 1 month = Feb 28/29).
inline int64_t ShiftMonthsClamped(const CivilDate& date, int64_t month_index) {
  const int64_t new_year = FloorDiv(month_index, 12);
  const int64_t new_month = month_index - new_year * 12 + 1;
  return DaysFromCivil(new_year, new_month, std::min(date.day, DaysInMonth(new_year, new_month)));
}

}  // namespace ketch::temporal
