package com.hospital.surveyinbox.config;

import com.hospital.surveyinbox.reception.ReceptionBodyLimitFilter;
import com.hospital.surveyinbox.reception.ReceptionReplyWriter;
import jakarta.servlet.DispatcherType;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Base64;
import org.springframework.boot.actuate.autoconfigure.security.servlet.EndpointRequest;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.HttpMethod;
import org.springframework.security.config.annotation.web.builders.HttpSecurity;
import org.springframework.security.config.http.SessionCreationPolicy;
import org.springframework.security.config.observation.SecurityObservationSettings;
import org.springframework.security.core.userdetails.User;
import org.springframework.security.core.userdetails.UserDetailsService;
import org.springframework.security.crypto.password.PasswordEncoder;
import org.springframework.security.provisioning.InMemoryUserDetailsManager;
import org.springframework.security.web.SecurityFilterChain;
import org.springframework.security.web.authentication.session.NullAuthenticatedSessionStrategy;
import org.springframework.security.web.csrf.CookieCsrfTokenRepository;
import org.springframework.security.web.csrf.CsrfTokenRequestAttributeHandler;
import org.springframework.security.web.servlet.util.matcher.PathPatternRequestMatcher;

/**
 * HTTP Basic with two roles: the legacy sender may only POST receptions, operators may only use
 * {@code /ops/**}. Failures answer in the contract's JSON shape with {@code X-Result-Code: N}.
 * Actuator lives on the management port and is not served on the public one.
 */
@Configuration
public class SecurityConfig {

    private static final org.slf4j.Logger log = org.slf4j.LoggerFactory.getLogger(SecurityConfig.class);

    static final String LEGACY = "LEGACY";
    static final String OPS = "OPS";
    /** adapter.security.ops-viewer: the operator API's reads only. */
    static final String OPS_VIEWER = "OPS_VIEWER";

    @Bean
    SecurityFilterChain securityFilterChain(HttpSecurity http, ReceptionReplyWriter writer, AuthFailureLimiter limiter,
                                           ClientAddress clientAddress) throws Exception {
        org.springframework.security.web.AuthenticationEntryPoint refused =
                (request, response, e) -> refuse(writer, limiter, clientAddress, request, response, e);
        CookieCsrfTokenRepository csrfTokens = CookieCsrfTokenRepository.withHttpOnlyFalse();
        csrfTokens.setCookiePath("/ops");
        csrfTokens.setCookieCustomizer(cookie -> cookie.sameSite("Strict"));
        http.csrf(csrf -> csrf
                        // the console (a browser holding Basic credentials) sends the cookie's token back as
                        // X-XSRF-TOKEN; curl and other API clients send no Origin, Sec-Fetch-* or Cookie header
                        // and need none: a forged cross-site request always carries Origin or Sec-Fetch-Site
                        .csrfTokenRepository(csrfTokens)
                        .csrfTokenRequestHandler(new HeaderOnlyCsrfToken())
                        .requireCsrfProtectionMatcher(SecurityConfig::browserWrite)
                        // Basic authenticates every request: the default strategy would clear the token on each
                        // one (the console's own API reads deleted its cookie). A cross-site page can neither
                        // read the cookie nor send the header without a CORS preflight, which nothing allows.
                        .sessionAuthenticationStrategy(new NullAuthenticatedSessionStrategy()))
                .headers(headers -> headers
                        .frameOptions(frame -> frame.deny())
                        .contentSecurityPolicy(csp -> csp.policyDirectives(CONTENT_SECURITY_POLICY)))
                .sessionManagement(s -> s.sessionCreationPolicy(SessionCreationPolicy.STATELESS))
                .requestCache(cache -> cache.disable())
                .formLogin(form -> form.disable())
                .logout(logout -> logout.disable())
                .httpBasic(basic -> basic.authenticationEntryPoint(refused))
                .exceptionHandling(ex -> ex
                        .authenticationEntryPoint(refused)
                        .accessDeniedHandler((request, response, e) -> writer.write(response, 403,
                                e instanceof org.springframework.security.web.csrf.CsrfException
                                        ? "CSRF token missing or not matching: reload the console (a script: no form Content-Type, "
                                                + "Cookie, Origin or Sec-Fetch-* header; e.g. curl -X POST without -d)"
                                        : "not allowed for this credential")))
                .authorizeHttpRequests(auth -> auth
                        .requestMatchers(EndpointRequest.toAnyEndpoint()).permitAll()
                        // Spring's own error dispatch (e.g. 405) must not turn into a 403
                        .dispatcherTypeMatchers(DispatcherType.ERROR).permitAll()
                        .requestMatchers(HttpMethod.POST, "/legacy/survey-send-info").hasRole(LEGACY)
                        .requestMatchers("/legacy/**").hasRole(LEGACY)
                        // a viewer reads (the console, lists, a row, stats, history, the API description); every
                        // other method under /ops (requeues, a reply's retry or abandon) is the operators' alone
                        .requestMatchers(HttpMethod.GET, "/ops/**").hasAnyRole(OPS, OPS_VIEWER)
                        .requestMatchers(HttpMethod.HEAD, "/ops/**").hasAnyRole(OPS, OPS_VIEWER)
                        .requestMatchers("/ops/**").hasRole(OPS)
                        .anyRequest().denyAll());
        return http.build();
    }

    /**
     * The token only from the {@code X-XSRF-TOKEN} header, and only on a request the browser marks same-origin when
     * it marks it at all. Spring's default also takes a {@code _csrf} parameter (of the query string too) and compares
     * it with the cookie alone; cookies are not kept apart by port or subdomain, so a page on the same site (another
     * port of localhost, where operators port-forward the console; a sibling host) could set its own
     * {@code XSRF-TOKEN} cookie for {@code /ops/inbox} and post a form carrying that value: requeues in the operator's
     * name. A custom header cannot be sent from another origin without a CORS preflight, which nothing allows.
     */
    static final class HeaderOnlyCsrfToken extends CsrfTokenRequestAttributeHandler {
        @Override
        public String resolveCsrfTokenValue(jakarta.servlet.http.HttpServletRequest request,
                                            org.springframework.security.web.csrf.CsrfToken token) {
            String site = request.getHeader("Sec-Fetch-Site");
            return site == null || site.equals("same-origin") ? request.getHeader(token.getHeaderName()) : null;
        }
    }

    /** Only the service's own files: no inline script or style, no framing, no other origin. */
    static final String CONTENT_SECURITY_POLICY = "default-src 'none'; script-src 'self'; style-src 'self'; "
            + "img-src 'self' data:; connect-src 'self'; font-src 'self'; base-uri 'none'; form-action 'self'; "
            + "frame-ancestors 'none'";

    private static final java.util.Set<String> SAFE_METHODS = java.util.Set.of("GET", "HEAD", "OPTIONS", "TRACE");

    /** The reception, matched as authorization and the handler mappings match it (the decoded, parsed path). */
    private static final org.springframework.security.web.util.matcher.RequestMatcher RECEPTION =
            PathPatternRequestMatcher.withDefaults().matcher(HttpMethod.POST, "/legacy/survey-send-info");

    /**
     * A state-changing request from a browser: CSRF applies to it, whatever its path, except the reception
     * (a server's POST; a browser could only send it cross-site as JSON after a CORS preflight nothing allows,
     * and a form's content type gets 415). API clients (no Origin, Sec-Fetch-* or Cookie header) are exempt.
     * The path is never compared as raw text: {@code /%6Fps/…}, {@code /ops;x/…} or {@code //ops/…} reach the
     * same controller as {@code /ops/…}, and so every spelling that routes anywhere needs the token.
     */
    static boolean browserWrite(jakarta.servlet.http.HttpServletRequest request) {
        return !SAFE_METHODS.contains(request.getMethod())
                && (request.getHeader("Origin") != null || request.getHeader("Sec-Fetch-Site") != null
                || request.getHeader("Cookie") != null || formContentType(request.getContentType()))
                && !RECEPTION.matches(request);
    }

    /**
     * The content types an HTML form can send cross-site without a preflight: an older browser or web view
     * may send such a form with neither Origin nor Sec-Fetch-* (a script sends none of these types unless told to:
     * {@code curl -d ''} sends the first, and its 403 says how to post instead).
     */
    static boolean formContentType(String contentType) {
        if (contentType == null) {
            return false;
        }
        String type = contentType.toLowerCase(java.util.Locale.ROOT);
        return type.startsWith("application/x-www-form-urlencoded") || type.startsWith("multipart/form-data")
                || type.startsWith("text/plain");
    }

    /**
     * No or wrong credentials: 401 with the Basic challenge (so a browser opening the console asks for the
     * operator's), or 429 when the client's address has used up its failures ({@link AuthFailureLimiter}).
     * Only wrong credentials count; right ones never come here, so they are never refused.
     */
    private static void refuse(ReceptionReplyWriter writer, AuthFailureLimiter limiter, ClientAddress clientAddress,
                               jakarta.servlet.http.HttpServletRequest request,
                               jakarta.servlet.http.HttpServletResponse response,
                               org.springframework.security.core.AuthenticationException e) throws java.io.IOException {
        if (e instanceof org.springframework.security.authentication.BadCredentialsException) {
            String address = clientAddress.of(request);
            if (limiter.failed(address)) {
                response.setHeader("Retry-After", Long.toString(limiter.retryAfterSeconds(address)));
                writer.write(response, 429, "too many failed authentications from this address; retry later");
                return;
            }
        }
        response.setHeader("WWW-Authenticate", "Basic realm=\"survey-inbox-adapter\", charset=\"UTF-8\"");
        writer.write(response, 401, "authentication required");
    }

    /**
     * No Micrometer observation per security filter, authentication and authorization: with an observation
     * registry present Spring Security wraps every filter of the chain in one, which cost a fifth of the
     * accept path's CPU (JFR, benchmark accept phase). Requests stay measured as {@code http_server_requests}.
     */
    /**
     * Path patterns for the matchers below, without asking Spring MVC's handler mappings on every request
     * (the default MVC matchers did; we map nothing by servlet path).
     */
    @Bean
    PathPatternRequestMatcher.Builder pathPatternRequestMatcherBuilder() {
        return PathPatternRequestMatcher.withDefaults();
    }

    /**
     * Spring Security's firewall, less its checks of header names and values and of parameter names: it refused a C1
     * control (a legacy sender's Windows-1252 "…", byte 0x85, is U+0085 to Tomcat) or a control in a parameter's name
     * only when Camel read the headers, inside the route's binding: a bare 500 that the sender retries for ever. Tomcat
     * still refuses what HTTP forbids (CR, LF, NUL); the one header the reception reads, {@code Idempotency-Key}, is
     * checked by the reception (400 naming it); no header or parameter is written back or sent downstream. The URL
     * checks stay.
     */
    @Bean
    org.springframework.security.web.firewall.HttpFirewall httpFirewall() {
        org.springframework.security.web.firewall.StrictHttpFirewall firewall = new org.springframework.security.web.firewall.StrictHttpFirewall();
        firewall.setAllowedHeaderNames(name -> true);
        firewall.setAllowedHeaderValues(value -> true);
        firewall.setAllowedParameterNames(name -> true);
        return firewall;
    }

    /** A URL the firewall refuses: on the reception the contract's 400 (N, its JSON body), elsewhere a plain 400. */
    @Bean
    org.springframework.security.web.firewall.RequestRejectedHandler requestRejectedHandler(ReceptionReplyWriter writer) {
        org.springframework.security.web.firewall.RequestRejectedHandler plain =
                new org.springframework.security.web.firewall.HttpStatusRequestRejectedHandler();
        return (request, response, rejected) -> {
            String uri = request.getRequestURI();
            if (uri != null && uri.startsWith("/legacy/")) {
                writer.write(response, 400, "request refused: its URL is not one the service accepts");
            } else {
                plain.handle(request, response, rejected);
            }
        };
    }

    @Bean
    SecurityObservationSettings securityObservationSettings() {
        return SecurityObservationSettings.noObservations();
    }

    @Bean
    UserDetailsService users(AdapterProperties properties, PasswordEncoder encoder) {
        AdapterProperties.Credentials legacy = properties.getSecurity().getLegacy();
        AdapterProperties.Credentials ops = properties.getSecurity().getOps();
        AdapterProperties.Credentials viewer = properties.getSecurity().getOpsViewer();
        if (legacy.getUsername().equals(ops.getUsername())) {
            throw new IllegalStateException("adapter.security.legacy.username and .ops.username must differ");
        }
        if (viewer != null && (viewer.getUsername().equals(legacy.getUsername()) || viewer.getUsername().equals(ops.getUsername()))) {
            throw new IllegalStateException("adapter.security.ops-viewer.username must differ from .legacy.username and .ops.username");
        }
        InMemoryUserDetailsManager users = new InMemoryUserDetailsManager(
                User.withUsername(legacy.getUsername()).password(stored(encoder, "legacy", legacy)).roles(LEGACY).build(),
                User.withUsername(ops.getUsername()).password(stored(encoder, "ops", ops)).roles(OPS).build());
        if (viewer != null) {
            users.createUser(User.withUsername(viewer.getUsername()).password(stored(encoder, "ops-viewer", viewer))
                    .roles(OPS_VIEWER).build());
        }
        return users;
    }

    /**
     * What a user's password is stored as: the password's digest, and while it is rotated ({@code next-password})
     * the next one's too, with the credential's name to count their use by ({@link #passwordEncoder}):
     * {@code <digest> <next digest> <name>}.
     */
    static String stored(PasswordEncoder encoder, String name, AdapterProperties.Credentials credentials) {
        String current = encoder.encode(credentials.getPassword());
        if (credentials.getNextPassword() == null) {
            return current;
        }
        log.info("adapter.security.{}: accepting its password and its next password while it is rotated; their use is counted "
                + "(adapter_security_password_used_total, credential={})", name, name);
        return current + " " + encoder.encode(credentials.getNextPassword()) + " " + name;
    }

    /**
     * Machine-to-machine secrets are high-entropy and checked on every request, so a deliberately slow
     * hash (BCrypt ≈ 80 ms) would dominate the accept latency. Digests are compared in constant time, both of a
     * credential being rotated whichever matches (the time does not tell which one did); while one is, each request
     * that passes is counted by the password it used ({@code adapter_security_password_used_total{credential,
     * password="current|next"}}): once {@code current} stays flat the client has moved and the next one can become
     * the password.
     */
    @Bean
    PasswordEncoder passwordEncoder(io.micrometer.core.instrument.MeterRegistry meters) {
        return new PasswordEncoder() {
            @Override
            public String encode(CharSequence raw) {
                return Base64.getEncoder().encodeToString(sha256(raw));
            }

            @Override
            public boolean matches(CharSequence raw, String encoded) {
                if (encoded == null) {
                    return false;
                }
                String[] parts = encoded.split(" ");
                byte[] digest = sha256(raw);
                boolean current = MessageDigest.isEqual(digest, Base64.getDecoder().decode(parts[0]));
                if (parts.length < 3) {
                    return current;
                }
                boolean next = MessageDigest.isEqual(digest, Base64.getDecoder().decode(parts[1]));
                if (current | next) {
                    meters.counter("adapter.security.password.used", "credential", parts[2], "password",
                            current ? "current" : "next").increment();
                }
                return current | next;
            }
        };
    }

    @Bean
    FilterRegistrationBean<ReceptionBodyLimitFilter> receptionBodyLimit(AdapterProperties properties,
                                                                        ReceptionReplyWriter writer) {
        FilterRegistrationBean<ReceptionBodyLimitFilter> registration =
                new FilterRegistrationBean<>(new ReceptionBodyLimitFilter(properties, writer));
        registration.addUrlPatterns("/legacy/*");
        registration.setOrder(0); // after Spring Security (-100): nobody unauthenticated gets a byte read
        return registration;
    }

    @Bean
    FilterRegistrationBean<OpsAdmissionFilter> opsAdmission(AdapterProperties properties,
                                                            io.micrometer.core.instrument.MeterRegistry meters) {
        FilterRegistrationBean<OpsAdmissionFilter> registration = new FilterRegistrationBean<>(new OpsAdmissionFilter(
                properties.getSecurity().getOpsMaxInFlight(), properties.getSecurity().getOpsMaxWritesInFlight(), meters));
        registration.addUrlPatterns("/ops/inbox", "/ops/inbox/*");
        registration.setOrder(1); // after the body was read (OpsBodyLimitFilter, 0): a body still arriving holds no permit
        return registration;
    }

    @Bean
    FilterRegistrationBean<OpsBodyLimitFilter> opsBodyLimit() {
        FilterRegistrationBean<OpsBodyLimitFilter> registration = new FilterRegistrationBean<>(new OpsBodyLimitFilter());
        registration.addUrlPatterns("/ops/inbox", "/ops/inbox/*");
        registration.setOrder(0); // after Spring Security (-100) and the starting answer (-20)
        return registration;
    }

    @Bean
    StartedFilter receptionStartedFilter(ReceptionReplyWriter writer) {
        return new StartedFilter(response -> writer.write(response, 503, "service is starting; nothing stored, please retry"));
    }

    @Bean
    FilterRegistrationBean<StartedFilter> receptionStarted(@org.springframework.beans.factory.annotation.Qualifier("receptionStartedFilter") StartedFilter filter) {
        FilterRegistrationBean<StartedFilter> registration = new FilterRegistrationBean<>(filter);
        registration.addUrlPatterns("/legacy/*");
        registration.setOrder(-20); // after authentication, before the rate limit takes a token for a request not served
        return registration;
    }

    /** The operator API's routes (routes/inbox-ops.camel.yaml, inbox-requeue.camel.yaml) before Camel has started them. */
    @Bean
    StartedFilter opsStartedFilter() {
        return new StartedFilter(response -> OpsBodyLimitFilter.writeError(response, 503, "service is starting; please retry"));
    }

    @Bean
    FilterRegistrationBean<StartedFilter> opsStarted(@org.springframework.beans.factory.annotation.Qualifier("opsStartedFilter") StartedFilter filter) {
        FilterRegistrationBean<StartedFilter> registration = new FilterRegistrationBean<>(filter);
        registration.addUrlPatterns("/ops/inbox", "/ops/inbox/*");
        registration.setOrder(-20); // after authentication: nobody but an operator learns the pod is starting
        return registration;
    }

    @Bean
    FilterRegistrationBean<com.hospital.surveyinbox.reception.SenderRateLimitFilter> senderRateLimit(
            AdapterProperties properties, ReceptionReplyWriter writer, com.hospital.surveyinbox.reception.ReceptionReplies replies,
            io.micrometer.core.instrument.MeterRegistry meters) {
        FilterRegistrationBean<com.hospital.surveyinbox.reception.SenderRateLimitFilter> registration =
                new FilterRegistrationBean<>(new com.hospital.surveyinbox.reception.SenderRateLimitFilter(properties, writer, replies, meters));
        registration.addUrlPatterns("/legacy/*");
        registration.setOrder(-10); // after authentication (who is sending), before the body is read
        return registration;
    }

    @Bean
    FilterRegistrationBean<com.hospital.surveyinbox.reception.ReceptionAdmissionFilter> receptionAdmission(
            AdapterProperties properties, ReceptionReplyWriter writer, com.hospital.surveyinbox.reception.ReceptionReplies replies,
            io.micrometer.core.instrument.MeterRegistry meters, org.springframework.core.env.Environment environment) {
        FilterRegistrationBean<com.hospital.surveyinbox.reception.ReceptionAdmissionFilter> registration =
                new FilterRegistrationBean<>(new com.hospital.surveyinbox.reception.ReceptionAdmissionFilter(
                        properties.getReception().getMaxInFlight(),
                        environment.getProperty("server.tomcat.threads.max", Integer.class, 200), writer, replies, meters));
        registration.addUrlPatterns("/legacy/*");
        registration.setOrder(-5); // after the sender's rate limit, before the body is read
        return registration;
    }

    @Bean
    FilterRegistrationBean<ForwardedProtoFilter> forwardedProto(ClientAddress clientAddress) {
        FilterRegistrationBean<ForwardedProtoFilter> registration = new FilterRegistrationBean<>(new ForwardedProtoFilter(clientAddress));
        registration.addUrlPatterns("/*");
        registration.setOrder(Integer.MIN_VALUE + 101); // before Spring Security decides on HSTS and the cookie's Secure flag
        return registration;
    }

    @Bean
    FilterRegistrationBean<InternalHeaderFilter> internalHeaders() {
        FilterRegistrationBean<InternalHeaderFilter> registration = new FilterRegistrationBean<>(new InternalHeaderFilter());
        registration.addUrlPatterns("/*");
        registration.setOrder(Integer.MIN_VALUE + 100); // first: nothing downstream ever sees them
        return registration;
    }

    private static byte[] sha256(CharSequence raw) {
        try {
            return MessageDigest.getInstance("SHA-256").digest(raw.toString().getBytes(StandardCharsets.UTF_8));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException(e);
        }
    }
}
