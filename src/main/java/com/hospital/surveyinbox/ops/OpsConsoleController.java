package com.hospital.surveyinbox.ops;

import jakarta.servlet.http.HttpServletRequest;
import org.springframework.core.io.ClassPathResource;
import org.springframework.core.io.Resource;
import org.springframework.http.CacheControl;
import org.springframework.http.MediaType;
import org.springframework.http.ResponseEntity;
import org.springframework.security.web.csrf.CsrfToken;
import org.springframework.stereotype.Controller;
import org.springframework.web.bind.annotation.GetMapping;

/**
 * {@code GET /ops/console} (CONTRACT §4): the operators' page, static HTML with its script and style under
 * {@code /ops/console/} (classpath {@code static/ops/console/}), talking only to {@code /ops/inbox}. Behind
 * the operators' Basic credentials like the rest of {@code /ops/**} (or a viewer's, whose requeue and count the API
 * refuses with 403). Loading the page issues the CSRF
 * cookie the page's requeue button sends back.
 */
@Controller
public class OpsConsoleController {

    private static final Resource PAGE = new ClassPathResource("static/ops/console/index.html");

    @GetMapping("/ops/console")
    public ResponseEntity<Resource> console(HttpServletRequest request) {
        CsrfToken token = (CsrfToken) request.getAttribute(CsrfToken.class.getName());
        if (token != null) {
            token.getToken(); // a deferred token is saved (the XSRF-TOKEN cookie) only once it is read
        }
        return ResponseEntity.ok().contentType(MediaType.TEXT_HTML).cacheControl(CacheControl.noStore()).body(PAGE);
    }
}
