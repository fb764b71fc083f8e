package com.hospital.surveyinbox.ops;

import static org.assertj.core.api.Assertions.assertThat;

import com.hospital.surveyinbox.support.IntegrationTest;
import com.hospital.surveyinbox.support.ServiceClient;
import java.net.URI;
import java.net.http.HttpRequest;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.test.context.TestPropertySource;

/**
 * The console's protection, over plain HTTP: operators' Basic credentials (with the browser challenge), a
 * strict Content-Security-Policy, no framing, and CSRF on a browser's requeue (cookie token echoed in
 * X-XSRF-TOKEN) while API clients without Origin, Sec-Fetch-* or Cookie headers keep using Basic alone.
 */
@TestPropertySource(properties = OpsConsoleBrowserTest.PROPERTIES)
class OpsConsoleSecurityTest extends IntegrationTest {

    @Test
    void theConsoleNeedsTheOperatorsCredentialAndChallengesABrowser() {
        ServiceClient.Reply anonymous = client.get("/ops/console", null);
        assertThat(anonymous.status()).isEqualTo(401);
        assertThat(anonymous.header("WWW-Authenticate")).startsWith("Basic realm=");
        assertThat(client.get("/ops/console", ServiceClient.LEGACY_AUTH).status()).isEqualTo(403);
        assertThat(client.get("/ops/console/console.js", null).status()).isEqualTo(401);
    }

    @Test
    void theConsoleIsServedWithAStrictPolicyAndItsCsrfCookie() {
        ServiceClient.Reply page = client.get("/ops/console", ServiceClient.OPS_AUTH);
        assertThat(page.status()).isEqualTo(200);
        assertThat(page.header("Content-Type")).startsWith("text/html");
        String csp = page.header("Content-Security-Policy");
        assertThat(csp).contains("default-src 'none'", "script-src 'self'", "style-src 'self'", "frame-ancestors 'none'")
                .doesNotContain("unsafe-inline").doesNotContain("unsafe-eval");
        assertThat(page.header("X-Frame-Options")).isEqualTo("DENY");
        assertThat(page.header("X-Content-Type-Options")).isEqualTo("nosniff");
        String tok = page.header("Set-Cookie").replaceAll(".*XSRF-TOKEN=([^;]+).*", "$1");
        ServiceClient.Reply stats = client.send(HttpRequest.newBuilder(URI.create("http://localhost:" + port + "/ops/inbox/stats"))
                .header("Authorization", ServiceClient.OPS_AUTH).header("Cookie", "XSRF-TOKEN=" + tok).GET().build());
        // the console's own API reads keep its token: no Set-Cookie clearing it
        assertThat(stats.status()).isEqualTo(200);
        assertThat(stats.header("Set-Cookie")).isNull();
        assertThat(page.header("Set-Cookie")).contains("XSRF-TOKEN=").contains("Path=/ops").contains("SameSite=Strict");
        // no inline script or style in the page itself: the policy would block it
        assertThat(page.body()).doesNotContain("<script>").doesNotContain("<style").doesNotContain("style=\"")
                .doesNotContain("onclick").contains("src=\"/ops/console/console.js\"");
        assertThat(client.get("/ops/console/console.js", ServiceClient.OPS_AUTH).status()).isEqualTo(200);
        assertThat(client.get("/ops/inbox/history?minutes=60", ServiceClient.OPS_AUTH).json().path("minutes")).hasSize(60);
        assertThat(client.get("/ops/inbox/history?minutes=0", ServiceClient.OPS_AUTH).status()).isEqualTo(400);
    }

    @Test
    void aBrowsersRequeueNeedsTheCsrfTokenAndAnApiClientDoesNot() {
        String row = "999999999"; // no such row: 404 once past the CSRF check, 403 when stopped by it
        String token = client.get("/ops/console", ServiceClient.OPS_AUTH).header("Set-Cookie").replaceAll(".*XSRF-TOKEN=([^;]+).*", "$1");

        // a forged cross-site POST: the browser adds Origin and its cached Basic credentials, not the token
        assertThat(requeue(row, Map.of("Origin", "https://evil.example", "Sec-Fetch-Site", "cross-site")).status()).isEqualTo(403);
        assertThat(requeue(row, Map.of("Origin", "https://evil.example", "Sec-Fetch-Site", "cross-site")).body()).contains("CSRF");
        // the console: same origin, the cookie and the header carry the same token
        assertThat(requeue(row, Map.of("Origin", "http://localhost:" + port, "Sec-Fetch-Site", "same-origin",
                "Cookie", "XSRF-TOKEN=" + token, "X-XSRF-TOKEN", token)).status()).isEqualTo(404);
        // a wrong token is refused
        assertThat(requeue(row, Map.of("Origin", "http://localhost:" + port, "Cookie", "XSRF-TOKEN=" + token,
                "X-XSRF-TOKEN", "not-" + token)).status()).isEqualTo(403);
        // curl: Basic alone
        assertThat(client.opsPost("/ops/inbox/" + row + "/requeue").status()).isEqualTo(404);
    }

    @Test
    void aPageOnTheSameSiteCannotRequeueWithATokenCookieOfItsOwn() {
        String row = "999999999";
        String token = client.get("/ops/console", ServiceClient.OPS_AUTH).header("Set-Cookie").replaceAll(".*XSRF-TOKEN=([^;]+).*", "$1");
        // a page on another port of localhost set XSRF-TOKEN=evil for /ops/inbox (sent before the console's cookie)
        // and posts a form whose action carries the same value: no custom header, so no preflight
        HttpRequest forged = HttpRequest.newBuilder(URI.create("http://localhost:" + port + "/ops/inbox/" + row + "/requeue?_csrf=evil"))
                .header("Authorization", ServiceClient.OPS_AUTH).header("Origin", "http://localhost:3000")
                .header("Sec-Fetch-Site", "same-site").header("Cookie", "XSRF-TOKEN=evil; XSRF-TOKEN=" + token)
                .header("Content-Type", "text/plain").POST(HttpRequest.BodyPublishers.ofString("x")).build();
        ServiceClient.Reply reply = client.send(forged);
        assertThat(reply.status()).isEqualTo(403);
        assertThat(reply.body()).contains("CSRF");
        // a form body's _csrf is not read either
        assertThat(requeue(row, Map.of("Origin", "http://localhost:3000", "Cookie", "XSRF-TOKEN=evil",
                "Content-Type", "application/x-www-form-urlencoded"), "_csrf=evil").status()).isEqualTo(403);
        // a script's POST with a form's type (curl -d '') is refused as a form could be sent cross-site, and told how to
        // send it instead: the console's "reload" alone left a script's author guessing
        ServiceClient.Reply script = requeue(row, Map.of("Content-Type", "application/x-www-form-urlencoded"), "");
        assertThat(script.status()).isEqualTo(403);
        assertThat(script.json().get("resultMessage").asText()).contains("a script: no form Content-Type");
        // the header with a matching cookie, on a request the browser marks as coming from another origin
        assertThat(requeue(row, Map.of("Origin", "http://localhost:3000", "Sec-Fetch-Site", "same-site",
                "Cookie", "XSRF-TOKEN=" + token, "X-XSRF-TOKEN", token)).status()).isEqualTo(403);
    }

    private ServiceClient.Reply requeue(String row, Map<String, String> headers) {
        return requeue(row, headers, null);
    }

    private ServiceClient.Reply requeue(String row, Map<String, String> headers, String body) {
        HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://localhost:" + port + "/ops/inbox/" + row + "/requeue"))
                .header("Authorization", ServiceClient.OPS_AUTH)
                .POST(body == null ? HttpRequest.BodyPublishers.noBody() : HttpRequest.BodyPublishers.ofString(body));
        headers.forEach(request::header);
        return client.send(request.build());
    }
}
