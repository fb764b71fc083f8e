package com.hospital.benchpeer;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;
import org.springframework.beans.factory.annotation.Value;
import org.springframework.boot.SpringBootConfiguration;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.autoconfigure.context.PropertyPlaceholderAutoConfiguration;
import org.springframework.boot.autoconfigure.http.HttpMessageConvertersAutoConfiguration;
import org.springframework.boot.autoconfigure.jackson.JacksonAutoConfiguration;
import org.springframework.boot.autoconfigure.jdbc.DataSourceAutoConfiguration;
import org.springframework.boot.autoconfigure.jdbc.DataSourceTransactionManagerAutoConfiguration;
import org.springframework.boot.autoconfigure.jdbc.JdbcTemplateAutoConfiguration;
import org.springframework.boot.autoconfigure.kafka.KafkaAutoConfiguration;
import org.springframework.boot.autoconfigure.security.servlet.SecurityAutoConfiguration;
import org.springframework.boot.autoconfigure.security.servlet.SecurityFilterAutoConfiguration;
import org.springframework.boot.autoconfigure.web.servlet.DispatcherServletAutoConfiguration;
import org.springframework.boot.autoconfigure.web.servlet.ServletWebServerFactoryAutoConfiguration;
import org.springframework.boot.autoconfigure.web.servlet.WebMvcAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.http.HttpMethod;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.jdbc.core.JdbcTemplate;
import org.springframework.kafka.core.KafkaTemplate;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.config.http.SessionCreationPolicy;
import org.springframework.security.core.userdetails.User;
import org.springframework.security.core.userdetails.UserDetailsService;
import org.springframework.security.crypto.password.PasswordEncoder;
import org.springframework.security.provisioning.InMemoryUserDetailsManager;
import org.springframework.security.web.SecurityFilterChain;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestBody;
import org.springframework.web.bind.annotation.RestController;

/**
 * The benchmark's peer: what a team would write by hand for the accept path without Camel. A plain
 * Spring MVC controller behind the same Basic authentication (same constant-time SHA-256 check, stateless),
 * the same required-field and identifier rules (CONTRACT §1), one {@code INSERT} and its commit per request
 * (autocommit) into a table shaped like the inbox, and a {@code KafkaTemplate} send after the commit.
 * Test sources only: it never reaches the production jar. No main method (a second one in the test classes
 * would leave {@code mvn spring-boot:test-run} unable to pick LocalRun): started as
 * {@code java org.springframework.boot.SpringApplication --spring.main.sources=com.hospital.benchpeer.PeerApplication}. Started in a JVM of its own by the benchmark; outside the service's package, so no service context scans it.
 */
@SpringBootConfiguration
@ImportAutoConfiguration({PropertyPlaceholderAutoConfiguration.class, ServletWebServerFactoryAutoConfiguration.class,
        DispatcherServletAutoConfiguration.class, WebMvcAutoConfiguration.class, HttpMessageConvertersAutoConfiguration.class,
        JacksonAutoConfiguration.class, DataSourceAutoConfiguration.class, JdbcTemplateAutoConfiguration.class,
        DataSourceTransactionManagerAutoConfiguration.class, KafkaAutoConfiguration.class, SecurityAutoConfiguration.class,
        SecurityFilterAutoConfiguration.class})
public class PeerApplication {

    @Bean
    SecurityFilterChain security(HttpSecurity http) throws Exception {
        return http.csrf(c -> c.disable())
                .sessionManagement(s -> s.sessionCreationPolicy(SessionCreationPolicy.STATELESS))
                .requestCache(c -> c.disable())
                .httpBasic(b -> { })
                .authorizeHttpRequests(a -> a.requestMatchers(HttpMethod.POST, "/legacy/survey-send-info").hasRole("LEGACY")
                        .anyRequest().denyAll())
                .build();
    }

    @Bean
    UserDetailsService users(PasswordEncoder encoder, @Value("${peer.username}") String user, @Value("${peer.password}") String password) {
        return new InMemoryUserDetailsManager(User.withUsername(user).password(encoder.encode(password)).roles("LEGACY").build());
    }

    @Bean
    PasswordEncoder passwordEncoder() {
        return new PasswordEncoder() {
            @Override
            public String encode(CharSequence raw) {
                return Base64.getEncoder().encodeToString(sha256(raw));
            }

            @Override
            public boolean matches(CharSequence raw, String encoded) {
                return MessageDigest.isEqual(sha256(raw), Base64.getDecoder().decode(encoded));
            }
        };
    }

    static byte[] sha256(CharSequence raw) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(raw.toString().getBytes(StandardCharsets.UTF_8));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }

    @RestController
    static class Reception {
        private static final List<String> REQUIRED = List.of("srvyDrawupNo", "patno", "formCd");
        private static final Pattern IDENTIFIER = Pattern.compile("[A-Za-z0-9._-]{1,100}");

        private final JdbcTemplate jdbc;
        private final KafkaTemplate<String, String> kafka;
        private final ObjectMapper mapper;
        private final String topic;

        Reception(JdbcTemplate jdbc, KafkaTemplate<String, String> kafka, ObjectMapper mapper, @Value("${peer.topic}") String topic) {
            this.jdbc = jdbc;
            this.kafka = kafka;
            this.mapper = mapper;
            this.topic = topic;
        }

        @PostMapping(path = "/legacy/survey-send-info", consumes = MediaType.APPLICATION_JSON_VALUE)
        ResponseEntity<Map<String, String>> receive(@RequestBody byte[] body) {
            JsonNode json;
            try {
                json = mapper.readTree(body);
            } catch (java.io.IOException e) {
                return answer(400, "N", "body is not valid JSON", null);
            }
            if (json == null || !json.isObject()) {
                return answer(400, "N", "a JSON object is required", null);
            }
            for (String field : REQUIRED) {
                JsonNode v = json.get(field);
                if (v == null || v.isNull() || v.asText().isBlank()) {
                    return answer(400, "N", "required field '" + field + "' is missing", null);
                }
            }
            for (String field : List.of("srvyDrawupNo", "patno", "srvyNo")) {
                JsonNode v = json.get(field);
                if (v == null || v.isNull()) {
                    continue; // srvyNo is optional; the others were checked above
                }
                String text = v.asText();
                if (!IDENTIFIER.matcher(text).matches() || text.equals(".") || text.equals("..")) {
                    return answer(400, "N", "field '" + field + "' is not a valid identifier", null);
                }
            }
            String subject = json.get("srvyDrawupNo").asText();
            String msgType = json.hasNonNull("msgType") ? json.get("msgType").asText() : "SEND";
            Long id = jdbc.queryForObject("INSERT INTO bench_peer (srvy_drawup_no, msg_type, payload) VALUES (?, ?, ?) RETURNING id",
                    Long.class, subject, msgType, body);
            // after the commit (autocommit): the event, asynchronously
            kafka.send(topic, subject, "{\"inboxId\":" + id + ",\"srvyDrawupNo\":\"" + subject + "\"}");
            return answer(200, "Y", "received", Long.toString(id));
        }

        private static ResponseEntity<Map<String, String>> answer(int status, String code, String message, String id) {
            Map<String, String> body = new LinkedHashMap<>();
            body.put("resultCode", code);
            body.put("message", message);
            if (id != null) {
                body.put("inboxId", id);
            }
            return ResponseEntity.status(status).header("X-Result-Code", code).body(body);
        }
    }
}
