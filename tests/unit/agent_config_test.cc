#include <catch2/catch.hpp>

#include "core/agent_config.h"

using namespace confine;

TEST_CASE("the copy of the agent's configuration keeps the user's settings and takes the brokers' addresses",
          "[agent-config]") {
  std::string text = R"(model = "gpt-5"
model_provider = "gw"
[model_providers.gw]
base_url = "https://gw.example/v1"
env_key = "GW_KEY"
wire_api = "responses"
[model_providers.half]
base_url = "https://half.example"
)";
  auto doc = parse_agent_config(text, "c.toml");
  REQUIRE(doc.ok());
  auto providers = config_providers(*doc, "model_providers");
  REQUIRE(providers.size() == 1);  // `half` has no env_key: nothing to broker
  CHECK(providers[0].name == "gw");
  CHECK(providers[0].url == "https://gw.example/v1");
  CHECK(providers[0].key_variable == "GW_KEY");
  CHECK(config_string(*doc, "model") == "gpt-5");
  CHECK(config_string(*doc, "missing").empty());

  auto edited = apply_copy_edits(text, "c.toml",
                                 {{"c.toml", {"openai_base_url"}, "http://127.0.0.1:14000/v1"},
                                  {"c.toml", {"model_providers", "gw", "base_url"}, "http://127.0.0.1:14010/v1"}});
  REQUIRE(edited.ok());
  auto again = parse_agent_config(*edited, "c.toml");
  REQUIRE(again.ok());
  CHECK(config_string(*again, "openai_base_url") == "http://127.0.0.1:14000/v1");
  CHECK(config_string(*again, "model") == "gpt-5");
  CHECK((*again)["model_providers"]["gw"]["base_url"].value<std::string>() == "http://127.0.0.1:14010/v1");
  CHECK((*again)["model_providers"]["gw"]["wire_api"].value<std::string>() == "responses");
  CHECK((*again)["model_providers"]["half"]["base_url"].value<std::string>() == "https://half.example");
}

TEST_CASE("a missing configuration becomes the edits alone; a key that is not a table on the way is refused",
          "[agent-config]") {
  auto made = apply_copy_edits(std::nullopt, "c.toml", {{"c.toml", {"openai_base_url"}, "http://127.0.0.1:14000/v1"}});
  REQUIRE(made.ok());
  auto doc = parse_agent_config(*made, "c.toml");
  REQUIRE(doc.ok());
  CHECK(config_string(*doc, "openai_base_url") == "http://127.0.0.1:14000/v1");
  auto bad = apply_copy_edits(std::string("model_providers = 3\n"), "c.toml",
                              {{"c.toml", {"model_providers", "gw", "base_url"}, "x"}});
  REQUIRE_FALSE(bad.ok());
  CHECK(bad.error().message() == "c.toml: `model_providers` is not a table; confine cannot point it at its broker");
  auto broken = apply_copy_edits(std::string("x = [\n"), "c.toml", {{"c.toml", {"a"}, "b"}});
  REQUIRE_FALSE(broken.ok());
  CHECK_THAT(broken.error().message(), Catch::StartsWith("c.toml:"));
}
