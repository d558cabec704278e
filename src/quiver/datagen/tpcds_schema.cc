// quiver/datagen/tpcds_schema.cc — the TPC-DS tables' names, schemas and
// sizes (tpcds.h, tpcds_rows.h).
#include <algorithm>
#include <cmath>

#include "quiver/datagen/tpcds.h"
#include "quiver/datagen/tpcds_rows.h"

namespace quiver::datagen {
namespace {

FieldPtr Key(const char* n) { return field(n, int32(), false); }
FieldPtr I(const char* n) { return field(n, int32(), true); }
FieldPtr Id(const char* n) { return field(n, utf8(), false); }
FieldPtr S(const char* n) { return field(n, utf8(), true); }
FieldPtr D(const char* n) { return field(n, date32(), true); }
FieldPtr M(const char* n, int precision = 7) { return field(n, decimal(128, precision, 2), true); }

SchemaPtr Make(std::vector<FieldPtr> fields) {
  auto s = std::make_shared<Schema>();
  s->fields = std::move(fields);
  return s;
}

// The address columns of store, call_center, warehouse and web_site (prefix
// + street_number .. country, gmt_offset).
void AddAddress(std::vector<FieldPtr>& f, const std::string& p) {
  for (const char* c :
       {"street_number", "street_name", "street_type", "suite_number", "city", "county", "state", "zip", "country"}) {
    f.push_back(field(p + c, utf8(), true));
  }
  f.push_back(field(p + "gmt_offset", decimal(128, 5, 2), true));
}

// The price columns of the sales tables; catalog and web sales add the ship
// cost columns.
void AddPrices(std::vector<FieldPtr>& f, const std::string& p, bool ship) {
  for (const char* c : {"wholesale_cost", "list_price", "sales_price", "ext_discount_amt", "ext_sales_price",
                        "ext_wholesale_cost", "ext_list_price", "ext_tax", "coupon_amt"}) {
    f.push_back(M((p + c).c_str()));
  }
  if (ship) f.push_back(M((p + "ext_ship_cost").c_str()));
  f.push_back(M((p + "net_paid").c_str()));
  f.push_back(M((p + "net_paid_inc_tax").c_str()));
  if (ship) {
    f.push_back(M((p + "net_paid_inc_ship").c_str()));
    f.push_back(M((p + "net_paid_inc_ship_tax").c_str()));
  }
  f.push_back(M((p + "net_profit").c_str()));
}

// Growth of a dimension above SF 1: base x scale^exponent (the
// specification's table at SF 10 and 100, approximately); below SF 1
// linear with a floor of min(6, base).
int64_t Dim(int64_t base, double scale, double exponent) {
  if (scale <= 1) {
    return std::max<int64_t>(std::min<int64_t>(6, base), std::llround(static_cast<double>(base) * scale));
  }
  return std::llround(static_cast<double>(base) * std::pow(scale, exponent));
}

int64_t Linear(int64_t base, double scale) {
  return std::max<int64_t>(1, std::llround(static_cast<double>(base) * scale));
}

}  // namespace

const std::vector<TpcdsTable>& AllTpcdsTables() {
  static const std::vector<TpcdsTable> kAll = [] {
    std::vector<TpcdsTable> v;
    for (int i = 0; i <= static_cast<int>(TpcdsTable::kWebSite); ++i) v.push_back(static_cast<TpcdsTable>(i));
    return v;
  }();
  return kAll;
}

std::string_view TpcdsTableName(TpcdsTable t) {
  static const char* const kNames[] = {"call_center",
                                       "catalog_page",
                                       "catalog_returns",
                                       "catalog_sales",
                                       "customer",
                                       "customer_address",
                                       "customer_demographics",
                                       "date_dim",
                                       "household_demographics",
                                       "income_band",
                                       "inventory",
                                       "item",
                                       "promotion",
                                       "reason",
                                       "ship_mode",
                                       "store",
                                       "store_returns",
                                       "store_sales",
                                       "time_dim",
                                       "warehouse",
                                       "web_page",
                                       "web_returns",
                                       "web_sales",
                                       "web_site"};
  const auto i = static_cast<size_t>(t);
  return i < std::size(kNames) ? kNames[i] : "?";
}

Result<TpcdsTable> ParseTpcdsTable(std::string_view name) {
  std::string all;
  for (TpcdsTable t : AllTpcdsTables()) {
    if (TpcdsTableName(t) == name) return t;
    if (!all.empty()) all.push_back('|');
    all.append(TpcdsTableName(t));
  }
  return Status::Invalid("unknown TPC-DS table '" + std::string(name) + "' (expected " + all + ")");
}

SchemaPtr TpcdsSchema(TpcdsTable t) {
  std::vector<FieldPtr> f;
  switch (t) {
    case TpcdsTable::kCallCenter:
      f = {Key("cc_call_center_sk"), Id("cc_call_center_id"), D("cc_rec_start_date"), D("cc_rec_end_date"),
           I("cc_closed_date_sk"),   I("cc_open_date_sk"),    S("cc_name"),           S("cc_class"),
           I("cc_employees"),        I("cc_sq_ft"),           S("cc_hours"),          S("cc_manager"),
           I("cc_mkt_id"),           S("cc_mkt_class"),       S("cc_mkt_desc"),       S("cc_market_manager"),
           I("cc_division"),         S("cc_division_name"),   I("cc_company"),        S("cc_company_name")};
      AddAddress(f, "cc_");
      f.push_back(M("cc_tax_percentage", 5));
      break;
    case TpcdsTable::kCatalogPage:
      f = {Key("cp_catalog_page_sk"),   Id("cp_catalog_page_id"), I("cp_start_date_sk"),
           I("cp_end_date_sk"),         S("cp_department"),       I("cp_catalog_number"),
           I("cp_catalog_page_number"), S("cp_description"),      S("cp_type")};
      break;
    case TpcdsTable::kCatalogReturns:
      f = {I("cr_returned_date_sk"),
           I("cr_returned_time_sk"),
           Key("cr_item_sk"),
           I("cr_refunded_customer_sk"),
           I("cr_refunded_cdemo_sk"),
           I("cr_refunded_hdemo_sk"),
           I("cr_refunded_addr_sk"),
           I("cr_returning_customer_sk"),
           I("cr_returning_cdemo_sk"),
           I("cr_returning_hdemo_sk"),
           I("cr_returning_addr_sk"),
           I("cr_call_center_sk"),
           I("cr_catalog_page_sk"),
           I("cr_ship_mode_sk"),
           I("cr_warehouse_sk"),
           I("cr_reason_sk"),
           Key("cr_order_number"),
           I("cr_return_quantity"),
           M("cr_return_amount"),
           M("cr_return_tax"),
           M("cr_return_amt_inc_tax"),
           M("cr_fee"),
           M("cr_return_ship_cost"),
           M("cr_refunded_cash"),
           M("cr_reversed_charge"),
           M("cr_store_credit"),
           M("cr_net_loss")};
      break;
    case TpcdsTable::kCatalogSales:
      f = {I("cs_sold_date_sk"),    I("cs_sold_time_sk"),   I("cs_ship_date_sk"), I("cs_bill_customer_sk"),
           I("cs_bill_cdemo_sk"),   I("cs_bill_hdemo_sk"),  I("cs_bill_addr_sk"), I("cs_ship_customer_sk"),
           I("cs_ship_cdemo_sk"),   I("cs_ship_hdemo_sk"),  I("cs_ship_addr_sk"), I("cs_call_center_sk"),
           I("cs_catalog_page_sk"), I("cs_ship_mode_sk"),   I("cs_warehouse_sk"), Key("cs_item_sk"),
           I("cs_promo_sk"),        Key("cs_order_number"), I("cs_quantity")};
      AddPrices(f, "cs_", true);
      break;
    case TpcdsTable::kCustomer:
      f = {Key("c_customer_sk"),       Id("c_customer_id"),
           I("c_current_cdemo_sk"),    I("c_current_hdemo_sk"),
           I("c_current_addr_sk"),     I("c_first_shipto_date_sk"),
           I("c_first_sales_date_sk"), S("c_salutation"),
           S("c_first_name"),          S("c_last_name"),
           S("c_preferred_cust_flag"), I("c_birth_day"),
           I("c_birth_month"),         I("c_birth_year"),
           S("c_birth_country"),       S("c_login"),
           S("c_email_address"),       I("c_last_review_date_sk")};
      break;
    case TpcdsTable::kCustomerAddress:
      f = {Key("ca_address_sk"), Id("ca_address_id")};
      AddAddress(f, "ca_");
      f.push_back(S("ca_location_type"));
      break;
    case TpcdsTable::kCustomerDemographics:
      f = {Key("cd_demo_sk"),         S("cd_gender"),        S("cd_marital_status"), S("cd_education_status"),
           I("cd_purchase_estimate"), S("cd_credit_rating"), I("cd_dep_count"),      I("cd_dep_employed_count"),
           I("cd_dep_college_count")};
      break;
    case TpcdsTable::kDateDim:
      f = {Key("d_date_sk"),
           Id("d_date_id"),
           D("d_date"),
           I("d_month_seq"),
           I("d_week_seq"),
           I("d_quarter_seq"),
           I("d_year"),
           I("d_dow"),
           I("d_moy"),
           I("d_dom"),
           I("d_qoy"),
           I("d_fy_year"),
           I("d_fy_quarter_seq"),
           I("d_fy_week_seq"),
           S("d_day_name"),
           S("d_quarter_name"),
           S("d_holiday"),
           S("d_weekend"),
           S("d_following_holiday"),
           I("d_first_dom"),
           I("d_last_dom"),
           I("d_same_day_ly"),
           I("d_same_day_lq"),
           S("d_current_day"),
           S("d_current_week"),
           S("d_current_month"),
           S("d_current_quarter"),
           S("d_current_year")};
      break;
    case TpcdsTable::kHouseholdDemographics:
      f = {Key("hd_demo_sk"), I("hd_income_band_sk"), S("hd_buy_potential"), I("hd_dep_count"), I("hd_vehicle_count")};
      break;
    case TpcdsTable::kIncomeBand: f = {Key("ib_income_band_sk"), I("ib_lower_bound"), I("ib_upper_bound")}; break;
    case TpcdsTable::kInventory:
      f = {Key("inv_date_sk"), Key("inv_item_sk"), Key("inv_warehouse_sk"), I("inv_quantity_on_hand")};
      break;
    case TpcdsTable::kItem:
      f = {Key("i_item_sk"),     Id("i_item_id"),       D("i_rec_start_date"), D("i_rec_end_date"), S("i_item_desc"),
           M("i_current_price"), M("i_wholesale_cost"), I("i_brand_id"),       S("i_brand"),        I("i_class_id"),
           S("i_class"),         I("i_category_id"),    S("i_category"),       I("i_manufact_id"),  S("i_manufact"),
           S("i_size"),          S("i_formulation"),    S("i_color"),          S("i_units"),        S("i_container"),
           I("i_manager_id"),    S("i_product_name")};
      break;
    case TpcdsTable::kPromotion:
      f = {Key("p_promo_sk"),      Id("p_promo_id"),     I("p_start_date_sk"),   I("p_end_date_sk"),
           I("p_item_sk"),         M("p_cost", 15),      I("p_response_target"), S("p_promo_name"),
           S("p_channel_dmail"),   S("p_channel_email"), S("p_channel_catalog"), S("p_channel_tv"),
           S("p_channel_radio"),   S("p_channel_press"), S("p_channel_event"),   S("p_channel_demo"),
           S("p_channel_details"), S("p_purpose"),       S("p_discount_active")};
      break;
    case TpcdsTable::kReason: f = {Key("r_reason_sk"), Id("r_reason_id"), S("r_reason_desc")}; break;
    case TpcdsTable::kShipMode:
      f = {Key("sm_ship_mode_sk"), Id("sm_ship_mode_id"), S("sm_type"),
           S("sm_code"),           S("sm_carrier"),       S("sm_contract")};
      break;
    case TpcdsTable::kStore:
      f = {Key("s_store_sk"),     Id("s_store_id"),      D("s_rec_start_date"),   D("s_rec_end_date"),
           I("s_closed_date_sk"), S("s_store_name"),     I("s_number_employees"), I("s_floor_space"),
           S("s_hours"),          S("s_manager"),        I("s_market_id"),        S("s_geography_class"),
           S("s_market_desc"),    S("s_market_manager"), I("s_division_id"),      S("s_division_name"),
           I("s_company_id"),     S("s_company_name")};
      AddAddress(f, "s_");
      f.push_back(M("s_tax_percentage", 5));
      break;
    case TpcdsTable::kStoreReturns:
      f = {I("sr_returned_date_sk"),
           I("sr_return_time_sk"),
           Key("sr_item_sk"),
           I("sr_customer_sk"),
           I("sr_cdemo_sk"),
           I("sr_hdemo_sk"),
           I("sr_addr_sk"),
           I("sr_store_sk"),
           I("sr_reason_sk"),
           Key("sr_ticket_number"),
           I("sr_return_quantity"),
           M("sr_return_amt"),
           M("sr_return_tax"),
           M("sr_return_amt_inc_tax"),
           M("sr_fee"),
           M("sr_return_ship_cost"),
           M("sr_refunded_cash"),
           M("sr_reversed_charge"),
           M("sr_store_credit"),
           M("sr_net_loss")};
      break;
    case TpcdsTable::kStoreSales:
      f = {I("ss_sold_date_sk"), I("ss_sold_time_sk"),    Key("ss_item_sk"), I("ss_customer_sk"),
           I("ss_cdemo_sk"),     I("ss_hdemo_sk"),        I("ss_addr_sk"),   I("ss_store_sk"),
           I("ss_promo_sk"),     Key("ss_ticket_number"), I("ss_quantity")};
      AddPrices(f, "ss_", false);
      break;
    case TpcdsTable::kTimeDim:
      f = {Key("t_time_sk"), Id("t_time_id"), I("t_time"),  I("t_hour"),      I("t_minute"),
           I("t_second"),    S("t_am_pm"),    S("t_shift"), S("t_sub_shift"), S("t_meal_time")};
      break;
    case TpcdsTable::kWarehouse:
      f = {Key("w_warehouse_sk"), Id("w_warehouse_id"), S("w_warehouse_name"), I("w_warehouse_sq_ft")};
      AddAddress(f, "w_");
      break;
    case TpcdsTable::kWebPage:
      f = {Key("wp_web_page_sk"), Id("wp_web_page_id"),     D("wp_rec_start_date"),
           D("wp_rec_end_date"),  I("wp_creation_date_sk"), I("wp_access_date_sk"),
           S("wp_autogen_flag"),  I("wp_customer_sk"),      S("wp_url"),
           S("wp_type"),          I("wp_char_count"),       I("wp_link_count"),
           I("wp_image_count"),   I("wp_max_ad_count")};
      break;
    case TpcdsTable::kWebReturns:
      f = {I("wr_returned_date_sk"),
           I("wr_returned_time_sk"),
           Key("wr_item_sk"),
           I("wr_refunded_customer_sk"),
           I("wr_refunded_cdemo_sk"),
           I("wr_refunded_hdemo_sk"),
           I("wr_refunded_addr_sk"),
           I("wr_returning_customer_sk"),
           I("wr_returning_cdemo_sk"),
           I("wr_returning_hdemo_sk"),
           I("wr_returning_addr_sk"),
           I("wr_web_page_sk"),
           I("wr_reason_sk"),
           Key("wr_order_number"),
           I("wr_return_quantity"),
           M("wr_return_amt"),
           M("wr_return_tax"),
           M("wr_return_amt_inc_tax"),
           M("wr_fee"),
           M("wr_return_ship_cost"),
           M("wr_refunded_cash"),
           M("wr_reversed_charge"),
           M("wr_account_credit"),
           M("wr_net_loss")};
      break;
    case TpcdsTable::kWebSales:
      f = {I("ws_sold_date_sk"),     I("ws_sold_time_sk"),   I("ws_ship_date_sk"),  Key("ws_item_sk"),
           I("ws_bill_customer_sk"), I("ws_bill_cdemo_sk"),  I("ws_bill_hdemo_sk"), I("ws_bill_addr_sk"),
           I("ws_ship_customer_sk"), I("ws_ship_cdemo_sk"),  I("ws_ship_hdemo_sk"), I("ws_ship_addr_sk"),
           I("ws_web_page_sk"),      I("ws_web_site_sk"),    I("ws_ship_mode_sk"),  I("ws_warehouse_sk"),
           I("ws_promo_sk"),         Key("ws_order_number"), I("ws_quantity")};
      AddPrices(f, "ws_", true);
      break;
    case TpcdsTable::kWebSite:
      f = {Key("web_site_sk"),      Id("web_site_id"),     D("web_rec_start_date"), D("web_rec_end_date"),
           S("web_name"),           I("web_open_date_sk"), I("web_close_date_sk"),  S("web_class"),
           S("web_manager"),        I("web_mkt_id"),       S("web_mkt_class"),      S("web_mkt_desc"),
           S("web_market_manager"), I("web_company_id"),   S("web_company_name")};
      AddAddress(f, "web_");
      f.push_back(M("web_tax_percentage", 5));
      break;
  }
  return Make(std::move(f));
}

namespace tpcds {

TpcdsCounts CountsFor(double scale) {
  TpcdsCounts c;
  c.call_center = Dim(6, scale, 0.35);
  c.catalog_page = Dim(11718, scale, 0.12);
  c.customer = Dim(100000, scale, 0.7);
  c.customer_address = Dim(50000, scale, 0.7);
  c.customer_demographics = 2 * 5 * 7 * 20 * 4 * 7 * 7 * 7;  // 1,920,800
  c.date_dim = kDateDimRows;
  c.household_demographics = 20 * 6 * 10 * 6;  // 7,200
  c.income_band = 20;
  c.item = Dim(18000, scale, 0.53);
  c.promotion = Dim(300, scale, 0.26);
  c.reason = 35;
  c.ship_mode = 20;
  c.store = Dim(12, scale, 0.76);
  c.time_dim = 86400;
  c.warehouse = Dim(5, scale, 0.24);
  c.web_page = Dim(60, scale, 0.6);
  c.web_site = Dim(30, scale, 0.15);
  c.store_tickets = Linear(240000, scale);
  c.catalog_orders = Linear(160000, scale);
  c.web_orders = Linear(60000, scale);
  c.inventory_weeks = 261;
  c.inventory_items = std::max<int64_t>(1, c.item / 2);
  return c;
}

int64_t UnitCount(TpcdsTable t, const TpcdsCounts& c) {
  switch (t) {
    case TpcdsTable::kCallCenter: return c.call_center;
    case TpcdsTable::kCatalogPage: return c.catalog_page;
    case TpcdsTable::kCatalogReturns:
    case TpcdsTable::kCatalogSales: return c.catalog_orders;
    case TpcdsTable::kCustomer: return c.customer;
    case TpcdsTable::kCustomerAddress: return c.customer_address;
    case TpcdsTable::kCustomerDemographics: return c.customer_demographics;
    case TpcdsTable::kDateDim: return c.date_dim;
    case TpcdsTable::kHouseholdDemographics: return c.household_demographics;
    case TpcdsTable::kIncomeBand: return c.income_band;
    case TpcdsTable::kInventory: return c.inventory_weeks * c.warehouse * c.inventory_items;
    case TpcdsTable::kItem: return c.item;
    case TpcdsTable::kPromotion: return c.promotion;
    case TpcdsTable::kReason: return c.reason;
    case TpcdsTable::kShipMode: return c.ship_mode;
    case TpcdsTable::kStore: return c.store;
    case TpcdsTable::kStoreReturns:
    case TpcdsTable::kStoreSales: return c.store_tickets;
    case TpcdsTable::kTimeDim: return c.time_dim;
    case TpcdsTable::kWarehouse: return c.warehouse;
    case TpcdsTable::kWebPage: return c.web_page;
    case TpcdsTable::kWebReturns:
    case TpcdsTable::kWebSales: return c.web_orders;
    case TpcdsTable::kWebSite: return c.web_site;
  }
  return 0;
}

}  // namespace tpcds

int64_t TpcdsRowCount(TpcdsTable table, double scale, uint64_t seed) {
  tpcds::TpcdsContext ctx;
  ctx.seed = seed;
  ctx.counts = tpcds::CountsFor(scale);
  const int64_t units = tpcds::UnitCount(table, ctx.counts);
  switch (table) {
    case TpcdsTable::kStoreSales:
    case TpcdsTable::kStoreReturns:
    case TpcdsTable::kCatalogSales:
    case TpcdsTable::kCatalogReturns:
    case TpcdsTable::kWebSales:
    case TpcdsTable::kWebReturns: {
      int64_t rows = 0;
      for (int64_t u = 0; u < units; ++u) rows += tpcds::OrderRows(ctx, table, u);
      return rows;
    }
    default: return units;
  }
}

}  // namespace quiver::datagen
