/*
 * sbfw_protocol.c: receiving, checking and answering frames (sensorbudget firmware_gen runtime),
 * protocol v2 (PROTOCOL.md).
 *
 * Receiving: a 0x00 byte ends a frame; the bytes before it are COBS-decoded on the fly into rx.
 * At the delimiter the body is checked (valid COBS, 8 <= length <= SBFW_MAX_BODY, CRC-32) and
 * dropped (counted) if any check fails, as device_sim.protocol.FrameDecoder does; an empty frame
 * (two delimiters) is ignored. A body longer than rx is followed to its end with a running CRC
 * and, if the CRC is right, reported as SBFW_OVERSIZE (the firmware answers BAD_LENGTH).
 * Sending: 0x00, the COBS blocks of the body written straight from tx, 0x00 (no second buffer).
 */
#include "sbfw_protocol.h"
#include "sbfw_hal.h"

#define SBFW_CRC_INIT UINT32_C(0xFFFFFFFF)
#if defined(SBFW_SEMIHOST_LINK) && !defined(SBFW_CRC_SLICE4)
#define SBFW_CRC_SLICE4          /* emulation images: 3 KiB more table, fewer instructions */
#endif
#if defined(SBFW_CRC_SLICE4) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "SBFW_CRC_SLICE4 loads four bytes as one little-endian word"
#endif

#ifdef __AVR__
/* AVR: bit by bit (no 1 KB table in its 2 KB of RAM). */
static uint32_t sbfw_crc32_update(uint32_t crc, const uint8_t *data, uint16_t n)
{
    uint16_t i;
    uint8_t bit;
    for (i = 0u; i < n; ++i) {
        crc ^= data[i];
        for (bit = 0u; bit < 8u; ++bit) {
            crc = (crc >> 1) ^ (UINT32_C(0xEDB88320) & (0u - (crc & 1u)));
        }
    }
    return crc;
}
#else
/* A byte at a time: sbfw_crc32_table[b] is the bitwise update of b (eight steps of the reflected
 * polynomial 0xEDB88320 from crc = b), so crc' = table[(crc ^ byte) & 0xFF] ^ (crc >> 8). */
static const uint32_t sbfw_crc32_table[256] = {
    UINT32_C(0x00000000), UINT32_C(0x77073096), UINT32_C(0xEE0E612C), UINT32_C(0x990951BA),
    UINT32_C(0x076DC419), UINT32_C(0x706AF48F), UINT32_C(0xE963A535), UINT32_C(0x9E6495A3),
    UINT32_C(0x0EDB8832), UINT32_C(0x79DCB8A4), UINT32_C(0xE0D5E91E), UINT32_C(0x97D2D988),
    UINT32_C(0x09B64C2B), UINT32_C(0x7EB17CBD), UINT32_C(0xE7B82D07), UINT32_C(0x90BF1D91),
    UINT32_C(0x1DB71064), UINT32_C(0x6AB020F2), UINT32_C(0xF3B97148), UINT32_C(0x84BE41DE),
    UINT32_C(0x1ADAD47D), UINT32_C(0x6DDDE4EB), UINT32_C(0xF4D4B551), UINT32_C(0x83D385C7),
    UINT32_C(0x136C9856), UINT32_C(0x646BA8C0), UINT32_C(0xFD62F97A), UINT32_C(0x8A65C9EC),
    UINT32_C(0x14015C4F), UINT32_C(0x63066CD9), UINT32_C(0xFA0F3D63), UINT32_C(0x8D080DF5),
    UINT32_C(0x3B6E20C8), UINT32_C(0x4C69105E), UINT32_C(0xD56041E4), UINT32_C(0xA2677172),
    UINT32_C(0x3C03E4D1), UINT32_C(0x4B04D447), UINT32_C(0xD20D85FD), UINT32_C(0xA50AB56B),
    UINT32_C(0x35B5A8FA), UINT32_C(0x42B2986C), UINT32_C(0xDBBBC9D6), UINT32_C(0xACBCF940),
    UINT32_C(0x32D86CE3), UINT32_C(0x45DF5C75), UINT32_C(0xDCD60DCF), UINT32_C(0xABD13D59),
    UINT32_C(0x26D930AC), UINT32_C(0x51DE003A), UINT32_C(0xC8D75180), UINT32_C(0xBFD06116),
    UINT32_C(0x21B4F4B5), UINT32_C(0x56B3C423), UINT32_C(0xCFBA9599), UINT32_C(0xB8BDA50F),
    UINT32_C(0x2802B89E), UINT32_C(0x5F058808), UINT32_C(0xC60CD9B2), UINT32_C(0xB10BE924),
    UINT32_C(0x2F6F7C87), UINT32_C(0x58684C11), UINT32_C(0xC1611DAB), UINT32_C(0xB6662D3D),
    UINT32_C(0x76DC4190), UINT32_C(0x01DB7106), UINT32_C(0x98D220BC), UINT32_C(0xEFD5102A),
    UINT32_C(0x71B18589), UINT32_C(0x06B6B51F), UINT32_C(0x9FBFE4A5), UINT32_C(0xE8B8D433),
    UINT32_C(0x7807C9A2), UINT32_C(0x0F00F934), UINT32_C(0x9609A88E), UINT32_C(0xE10E9818),
    UINT32_C(0x7F6A0DBB), UINT32_C(0x086D3D2D), UINT32_C(0x91646C97), UINT32_C(0xE6635C01),
    UINT32_C(0x6B6B51F4), UINT32_C(0x1C6C6162), UINT32_C(0x856530D8), UINT32_C(0xF262004E),
    UINT32_C(0x6C0695ED), UINT32_C(0x1B01A57B), UINT32_C(0x8208F4C1), UINT32_C(0xF50FC457),
    UINT32_C(0x65B0D9C6), UINT32_C(0x12B7E950), UINT32_C(0x8BBEB8EA), UINT32_C(0xFCB9887C),
    UINT32_C(0x62DD1DDF), UINT32_C(0x15DA2D49), UINT32_C(0x8CD37CF3), UINT32_C(0xFBD44C65),
    UINT32_C(0x4DB26158), UINT32_C(0x3AB551CE), UINT32_C(0xA3BC0074), UINT32_C(0xD4BB30E2),
    UINT32_C(0x4ADFA541), UINT32_C(0x3DD895D7), UINT32_C(0xA4D1C46D), UINT32_C(0xD3D6F4FB),
    UINT32_C(0x4369E96A), UINT32_C(0x346ED9FC), UINT32_C(0xAD678846), UINT32_C(0xDA60B8D0),
    UINT32_C(0x44042D73), UINT32_C(0x33031DE5), UINT32_C(0xAA0A4C5F), UINT32_C(0xDD0D7CC9),
    UINT32_C(0x5005713C), UINT32_C(0x270241AA), UINT32_C(0xBE0B1010), UINT32_C(0xC90C2086),
    UINT32_C(0x5768B525), UINT32_C(0x206F85B3), UINT32_C(0xB966D409), UINT32_C(0xCE61E49F),
    UINT32_C(0x5EDEF90E), UINT32_C(0x29D9C998), UINT32_C(0xB0D09822), UINT32_C(0xC7D7A8B4),
    UINT32_C(0x59B33D17), UINT32_C(0x2EB40D81), UINT32_C(0xB7BD5C3B), UINT32_C(0xC0BA6CAD),
    UINT32_C(0xEDB88320), UINT32_C(0x9ABFB3B6), UINT32_C(0x03B6E20C), UINT32_C(0x74B1D29A),
    UINT32_C(0xEAD54739), UINT32_C(0x9DD277AF), UINT32_C(0x04DB2615), UINT32_C(0x73DC1683),
    UINT32_C(0xE3630B12), UINT32_C(0x94643B84), UINT32_C(0x0D6D6A3E), UINT32_C(0x7A6A5AA8),
    UINT32_C(0xE40ECF0B), UINT32_C(0x9309FF9D), UINT32_C(0x0A00AE27), UINT32_C(0x7D079EB1),
    UINT32_C(0xF00F9344), UINT32_C(0x8708A3D2), UINT32_C(0x1E01F268), UINT32_C(0x6906C2FE),
    UINT32_C(0xF762575D), UINT32_C(0x806567CB), UINT32_C(0x196C3671), UINT32_C(0x6E6B06E7),
    UINT32_C(0xFED41B76), UINT32_C(0x89D32BE0), UINT32_C(0x10DA7A5A), UINT32_C(0x67DD4ACC),
    UINT32_C(0xF9B9DF6F), UINT32_C(0x8EBEEFF9), UINT32_C(0x17B7BE43), UINT32_C(0x60B08ED5),
    UINT32_C(0xD6D6A3E8), UINT32_C(0xA1D1937E), UINT32_C(0x38D8C2C4), UINT32_C(0x4FDFF252),
    UINT32_C(0xD1BB67F1), UINT32_C(0xA6BC5767), UINT32_C(0x3FB506DD), UINT32_C(0x48B2364B),
    UINT32_C(0xD80D2BDA), UINT32_C(0xAF0A1B4C), UINT32_C(0x36034AF6), UINT32_C(0x41047A60),
    UINT32_C(0xDF60EFC3), UINT32_C(0xA867DF55), UINT32_C(0x316E8EEF), UINT32_C(0x4669BE79),
    UINT32_C(0xCB61B38C), UINT32_C(0xBC66831A), UINT32_C(0x256FD2A0), UINT32_C(0x5268E236),
    UINT32_C(0xCC0C7795), UINT32_C(0xBB0B4703), UINT32_C(0x220216B9), UINT32_C(0x5505262F),
    UINT32_C(0xC5BA3BBE), UINT32_C(0xB2BD0B28), UINT32_C(0x2BB45A92), UINT32_C(0x5CB36A04),
    UINT32_C(0xC2D7FFA7), UINT32_C(0xB5D0CF31), UINT32_C(0x2CD99E8B), UINT32_C(0x5BDEAE1D),
    UINT32_C(0x9B64C2B0), UINT32_C(0xEC63F226), UINT32_C(0x756AA39C), UINT32_C(0x026D930A),
    UINT32_C(0x9C0906A9), UINT32_C(0xEB0E363F), UINT32_C(0x72076785), UINT32_C(0x05005713),
    UINT32_C(0x95BF4A82), UINT32_C(0xE2B87A14), UINT32_C(0x7BB12BAE), UINT32_C(0x0CB61B38),
    UINT32_C(0x92D28E9B), UINT32_C(0xE5D5BE0D), UINT32_C(0x7CDCEFB7), UINT32_C(0x0BDBDF21),
    UINT32_C(0x86D3D2D4), UINT32_C(0xF1D4E242), UINT32_C(0x68DDB3F8), UINT32_C(0x1FDA836E),
    UINT32_C(0x81BE16CD), UINT32_C(0xF6B9265B), UINT32_C(0x6FB077E1), UINT32_C(0x18B74777),
    UINT32_C(0x88085AE6), UINT32_C(0xFF0F6A70), UINT32_C(0x66063BCA), UINT32_C(0x11010B5C),
    UINT32_C(0x8F659EFF), UINT32_C(0xF862AE69), UINT32_C(0x616BFFD3), UINT32_C(0x166CCF45),
    UINT32_C(0xA00AE278), UINT32_C(0xD70DD2EE), UINT32_C(0x4E048354), UINT32_C(0x3903B3C2),
    UINT32_C(0xA7672661), UINT32_C(0xD06016F7), UINT32_C(0x4969474D), UINT32_C(0x3E6E77DB),
    UINT32_C(0xAED16A4A), UINT32_C(0xD9D65ADC), UINT32_C(0x40DF0B66), UINT32_C(0x37D83BF0),
    UINT32_C(0xA9BCAE53), UINT32_C(0xDEBB9EC5), UINT32_C(0x47B2CF7F), UINT32_C(0x30B5FFE9),
    UINT32_C(0xBDBDF21C), UINT32_C(0xCABAC28A), UINT32_C(0x53B39330), UINT32_C(0x24B4A3A6),
    UINT32_C(0xBAD03605), UINT32_C(0xCDD70693), UINT32_C(0x54DE5729), UINT32_C(0x23D967BF),
    UINT32_C(0xB3667A2E), UINT32_C(0xC4614AB8), UINT32_C(0x5D681B02), UINT32_C(0x2A6F2B94),
    UINT32_C(0xB40BBE37), UINT32_C(0xC30C8EA1), UINT32_C(0x5A05DF1B), UINT32_C(0x2D02EF8D)
};


#ifdef SBFW_CRC_SLICE4
/* Four bytes at a time (slice-by-4) on the emulation link, where the CRC is the receiver's
 * largest cost per byte. With T0 = sbfw_crc32_table and Tk = sbfw_crc32_slices[k - 1], Tk[b] is
 * T0[b] advanced by k more zero bytes (Tk[b] = (Tk-1[b] >> 8) ^ T0[Tk-1[b] & 0xFF]), so the
 * register after four bytes w (little-endian, xored into it) is the xor of T(3 - j)[byte j]. */
static const uint32_t sbfw_crc32_slices[3][256] = {
    {
        0x00000000u, 0x191B3141u, 0x32366282u, 0x2B2D53C3u, 0x646CC504u, 0x7D77F445u, 0x565AA786u,
        0x4F4196C7u, 0xC8D98A08u, 0xD1C2BB49u, 0xFAEFE88Au, 0xE3F4D9CBu, 0xACB54F0Cu, 0xB5AE7E4Du,
        0x9E832D8Eu, 0x87981CCFu, 0x4AC21251u, 0x53D92310u, 0x78F470D3u, 0x61EF4192u, 0x2EAED755u,
        0x37B5E614u, 0x1C98B5D7u, 0x05838496u, 0x821B9859u, 0x9B00A918u, 0xB02DFADBu, 0xA936CB9Au,
        0xE6775D5Du, 0xFF6C6C1Cu, 0xD4413FDFu, 0xCD5A0E9Eu, 0x958424A2u, 0x8C9F15E3u, 0xA7B24620u,
        0xBEA97761u, 0xF1E8E1A6u, 0xE8F3D0E7u, 0xC3DE8324u, 0xDAC5B265u, 0x5D5DAEAAu, 0x44469FEBu,
        0x6F6BCC28u, 0x7670FD69u, 0x39316BAEu, 0x202A5AEFu, 0x0B07092Cu, 0x121C386Du, 0xDF4636F3u,
        0xC65D07B2u, 0xED705471u, 0xF46B6530u, 0xBB2AF3F7u, 0xA231C2B6u, 0x891C9175u, 0x9007A034u,
        0x179FBCFBu, 0x0E848DBAu, 0x25A9DE79u, 0x3CB2EF38u, 0x73F379FFu, 0x6AE848BEu, 0x41C51B7Du,
        0x58DE2A3Cu, 0xF0794F05u, 0xE9627E44u, 0xC24F2D87u, 0xDB541CC6u, 0x94158A01u, 0x8D0EBB40u,
        0xA623E883u, 0xBF38D9C2u, 0x38A0C50Du, 0x21BBF44Cu, 0x0A96A78Fu, 0x138D96CEu, 0x5CCC0009u,
        0x45D73148u, 0x6EFA628Bu, 0x77E153CAu, 0xBABB5D54u, 0xA3A06C15u, 0x888D3FD6u, 0x91960E97u,
        0xDED79850u, 0xC7CCA911u, 0xECE1FAD2u, 0xF5FACB93u, 0x7262D75Cu, 0x6B79E61Du, 0x4054B5DEu,
        0x594F849Fu, 0x160E1258u, 0x0F152319u, 0x243870DAu, 0x3D23419Bu, 0x65FD6BA7u, 0x7CE65AE6u,
        0x57CB0925u, 0x4ED03864u, 0x0191AEA3u, 0x188A9FE2u, 0x33A7CC21u, 0x2ABCFD60u, 0xAD24E1AFu,
        0xB43FD0EEu, 0x9F12832Du, 0x8609B26Cu, 0xC94824ABu, 0xD05315EAu, 0xFB7E4629u, 0xE2657768u,
        0x2F3F79F6u, 0x362448B7u, 0x1D091B74u, 0x04122A35u, 0x4B53BCF2u, 0x52488DB3u, 0x7965DE70u,
        0x607EEF31u, 0xE7E6F3FEu, 0xFEFDC2BFu, 0xD5D0917Cu, 0xCCCBA03Du, 0x838A36FAu, 0x9A9107BBu,
        0xB1BC5478u, 0xA8A76539u, 0x3B83984Bu, 0x2298A90Au, 0x09B5FAC9u, 0x10AECB88u, 0x5FEF5D4Fu,
        0x46F46C0Eu, 0x6DD93FCDu, 0x74C20E8Cu, 0xF35A1243u, 0xEA412302u, 0xC16C70C1u, 0xD8774180u,
        0x9736D747u, 0x8E2DE606u, 0xA500B5C5u, 0xBC1B8484u, 0x71418A1Au, 0x685ABB5Bu, 0x4377E898u,
        0x5A6CD9D9u, 0x152D4F1Eu, 0x0C367E5Fu, 0x271B2D9Cu, 0x3E001CDDu, 0xB9980012u, 0xA0833153u,
        0x8BAE6290u, 0x92B553D1u, 0xDDF4C516u, 0xC4EFF457u, 0xEFC2A794u, 0xF6D996D5u, 0xAE07BCE9u,
        0xB71C8DA8u, 0x9C31DE6Bu, 0x852AEF2Au, 0xCA6B79EDu, 0xD37048ACu, 0xF85D1B6Fu, 0xE1462A2Eu,
        0x66DE36E1u, 0x7FC507A0u, 0x54E85463u, 0x4DF36522u, 0x02B2F3E5u, 0x1BA9C2A4u, 0x30849167u,
        0x299FA026u, 0xE4C5AEB8u, 0xFDDE9FF9u, 0xD6F3CC3Au, 0xCFE8FD7Bu, 0x80A96BBCu, 0x99B25AFDu,
        0xB29F093Eu, 0xAB84387Fu, 0x2C1C24B0u, 0x350715F1u, 0x1E2A4632u, 0x07317773u, 0x4870E1B4u,
        0x516BD0F5u, 0x7A468336u, 0x635DB277u, 0xCBFAD74Eu, 0xD2E1E60Fu, 0xF9CCB5CCu, 0xE0D7848Du,
        0xAF96124Au, 0xB68D230Bu, 0x9DA070C8u, 0x84BB4189u, 0x03235D46u, 0x1A386C07u, 0x31153FC4u,
        0x280E0E85u, 0x674F9842u, 0x7E54A903u, 0x5579FAC0u, 0x4C62CB81u, 0x8138C51Fu, 0x9823F45Eu,
        0xB30EA79Du, 0xAA1596DCu, 0xE554001Bu, 0xFC4F315Au, 0xD7626299u, 0xCE7953D8u, 0x49E14F17u,
        0x50FA7E56u, 0x7BD72D95u, 0x62CC1CD4u, 0x2D8D8A13u, 0x3496BB52u, 0x1FBBE891u, 0x06A0D9D0u,
        0x5E7EF3ECu, 0x4765C2ADu, 0x6C48916Eu, 0x7553A02Fu, 0x3A1236E8u, 0x230907A9u, 0x0824546Au,
        0x113F652Bu, 0x96A779E4u, 0x8FBC48A5u, 0xA4911B66u, 0xBD8A2A27u, 0xF2CBBCE0u, 0xEBD08DA1u,
        0xC0FDDE62u, 0xD9E6EF23u, 0x14BCE1BDu, 0x0DA7D0FCu, 0x268A833Fu, 0x3F91B27Eu, 0x70D024B9u,
        0x69CB15F8u, 0x42E6463Bu, 0x5BFD777Au, 0xDC656BB5u, 0xC57E5AF4u, 0xEE530937u, 0xF7483876u,
        0xB809AEB1u, 0xA1129FF0u, 0x8A3FCC33u, 0x9324FD72u
    }, {
        0x00000000u, 0x01C26A37u, 0x0384D46Eu, 0x0246BE59u, 0x0709A8DCu, 0x06CBC2EBu, 0x048D7CB2u,
        0x054F1685u, 0x0E1351B8u, 0x0FD13B8Fu, 0x0D9785D6u, 0x0C55EFE1u, 0x091AF964u, 0x08D89353u,
        0x0A9E2D0Au, 0x0B5C473Du, 0x1C26A370u, 0x1DE4C947u, 0x1FA2771Eu, 0x1E601D29u, 0x1B2F0BACu,
        0x1AED619Bu, 0x18ABDFC2u, 0x1969B5F5u, 0x1235F2C8u, 0x13F798FFu, 0x11B126A6u, 0x10734C91u,
        0x153C5A14u, 0x14FE3023u, 0x16B88E7Au, 0x177AE44Du, 0x384D46E0u, 0x398F2CD7u, 0x3BC9928Eu,
        0x3A0BF8B9u, 0x3F44EE3Cu, 0x3E86840Bu, 0x3CC03A52u, 0x3D025065u, 0x365E1758u, 0x379C7D6Fu,
        0x35DAC336u, 0x3418A901u, 0x3157BF84u, 0x3095D5B3u, 0x32D36BEAu, 0x331101DDu, 0x246BE590u,
        0x25A98FA7u, 0x27EF31FEu, 0x262D5BC9u, 0x23624D4Cu, 0x22A0277Bu, 0x20E69922u, 0x2124F315u,
        0x2A78B428u, 0x2BBADE1Fu, 0x29FC6046u, 0x283E0A71u, 0x2D711CF4u, 0x2CB376C3u, 0x2EF5C89Au,
        0x2F37A2ADu, 0x709A8DC0u, 0x7158E7F7u, 0x731E59AEu, 0x72DC3399u, 0x7793251Cu, 0x76514F2Bu,
        0x7417F172u, 0x75D59B45u, 0x7E89DC78u, 0x7F4BB64Fu, 0x7D0D0816u, 0x7CCF6221u, 0x798074A4u,
        0x78421E93u, 0x7A04A0CAu, 0x7BC6CAFDu, 0x6CBC2EB0u, 0x6D7E4487u, 0x6F38FADEu, 0x6EFA90E9u,
        0x6BB5866Cu, 0x6A77EC5Bu, 0x68315202u, 0x69F33835u, 0x62AF7F08u, 0x636D153Fu, 0x612BAB66u,
        0x60E9C151u, 0x65A6D7D4u, 0x6464BDE3u, 0x662203BAu, 0x67E0698Du, 0x48D7CB20u, 0x4915A117u,
        0x4B531F4Eu, 0x4A917579u, 0x4FDE63FCu, 0x4E1C09CBu, 0x4C5AB792u, 0x4D98DDA5u, 0x46C49A98u,
        0x4706F0AFu, 0x45404EF6u, 0x448224C1u, 0x41CD3244u, 0x400F5873u, 0x4249E62Au, 0x438B8C1Du,
        0x54F16850u, 0x55330267u, 0x5775BC3Eu, 0x56B7D609u, 0x53F8C08Cu, 0x523AAABBu, 0x507C14E2u,
        0x51BE7ED5u, 0x5AE239E8u, 0x5B2053DFu, 0x5966ED86u, 0x58A487B1u, 0x5DEB9134u, 0x5C29FB03u,
        0x5E6F455Au, 0x5FAD2F6Du, 0xE1351B80u, 0xE0F771B7u, 0xE2B1CFEEu, 0xE373A5D9u, 0xE63CB35Cu,
        0xE7FED96Bu, 0xE5B86732u, 0xE47A0D05u, 0xEF264A38u, 0xEEE4200Fu, 0xECA29E56u, 0xED60F461u,
        0xE82FE2E4u, 0xE9ED88D3u, 0xEBAB368Au, 0xEA695CBDu, 0xFD13B8F0u, 0xFCD1D2C7u, 0xFE976C9Eu,
        0xFF5506A9u, 0xFA1A102Cu, 0xFBD87A1Bu, 0xF99EC442u, 0xF85CAE75u, 0xF300E948u, 0xF2C2837Fu,
        0xF0843D26u, 0xF1465711u, 0xF4094194u, 0xF5CB2BA3u, 0xF78D95FAu, 0xF64FFFCDu, 0xD9785D60u,
        0xD8BA3757u, 0xDAFC890Eu, 0xDB3EE339u, 0xDE71F5BCu, 0xDFB39F8Bu, 0xDDF521D2u, 0xDC374BE5u,
        0xD76B0CD8u, 0xD6A966EFu, 0xD4EFD8B6u, 0xD52DB281u, 0xD062A404u, 0xD1A0CE33u, 0xD3E6706Au,
        0xD2241A5Du, 0xC55EFE10u, 0xC49C9427u, 0xC6DA2A7Eu, 0xC7184049u, 0xC25756CCu, 0xC3953CFBu,
        0xC1D382A2u, 0xC011E895u, 0xCB4DAFA8u, 0xCA8FC59Fu, 0xC8C97BC6u, 0xC90B11F1u, 0xCC440774u,
        0xCD866D43u, 0xCFC0D31Au, 0xCE02B92Du, 0x91AF9640u, 0x906DFC77u, 0x922B422Eu, 0x93E92819u,
        0x96A63E9Cu, 0x976454ABu, 0x9522EAF2u, 0x94E080C5u, 0x9FBCC7F8u, 0x9E7EADCFu, 0x9C381396u,
        0x9DFA79A1u, 0x98B56F24u, 0x99770513u, 0x9B31BB4Au, 0x9AF3D17Du, 0x8D893530u, 0x8C4B5F07u,
        0x8E0DE15Eu, 0x8FCF8B69u, 0x8A809DECu, 0x8B42F7DBu, 0x89044982u, 0x88C623B5u, 0x839A6488u,
        0x82580EBFu, 0x801EB0E6u, 0x81DCDAD1u, 0x8493CC54u, 0x8551A663u, 0x8717183Au, 0x86D5720Du,
        0xA9E2D0A0u, 0xA820BA97u, 0xAA6604CEu, 0xABA46EF9u, 0xAEEB787Cu, 0xAF29124Bu, 0xAD6FAC12u,
        0xACADC625u, 0xA7F18118u, 0xA633EB2Fu, 0xA4755576u, 0xA5B73F41u, 0xA0F829C4u, 0xA13A43F3u,
        0xA37CFDAAu, 0xA2BE979Du, 0xB5C473D0u, 0xB40619E7u, 0xB640A7BEu, 0xB782CD89u, 0xB2CDDB0Cu,
        0xB30FB13Bu, 0xB1490F62u, 0xB08B6555u, 0xBBD72268u, 0xBA15485Fu, 0xB853F606u, 0xB9919C31u,
        0xBCDE8AB4u, 0xBD1CE083u, 0xBF5A5EDAu, 0xBE9834EDu
    }, {
        0x00000000u, 0xB8BC6765u, 0xAA09C88Bu, 0x12B5AFEEu, 0x8F629757u, 0x37DEF032u, 0x256B5FDCu,
        0x9DD738B9u, 0xC5B428EFu, 0x7D084F8Au, 0x6FBDE064u, 0xD7018701u, 0x4AD6BFB8u, 0xF26AD8DDu,
        0xE0DF7733u, 0x58631056u, 0x5019579Fu, 0xE8A530FAu, 0xFA109F14u, 0x42ACF871u, 0xDF7BC0C8u,
        0x67C7A7ADu, 0x75720843u, 0xCDCE6F26u, 0x95AD7F70u, 0x2D111815u, 0x3FA4B7FBu, 0x8718D09Eu,
        0x1ACFE827u, 0xA2738F42u, 0xB0C620ACu, 0x087A47C9u, 0xA032AF3Eu, 0x188EC85Bu, 0x0A3B67B5u,
        0xB28700D0u, 0x2F503869u, 0x97EC5F0Cu, 0x8559F0E2u, 0x3DE59787u, 0x658687D1u, 0xDD3AE0B4u,
        0xCF8F4F5Au, 0x7733283Fu, 0xEAE41086u, 0x525877E3u, 0x40EDD80Du, 0xF851BF68u, 0xF02BF8A1u,
        0x48979FC4u, 0x5A22302Au, 0xE29E574Fu, 0x7F496FF6u, 0xC7F50893u, 0xD540A77Du, 0x6DFCC018u,
        0x359FD04Eu, 0x8D23B72Bu, 0x9F9618C5u, 0x272A7FA0u, 0xBAFD4719u, 0x0241207Cu, 0x10F48F92u,
        0xA848E8F7u, 0x9B14583Du, 0x23A83F58u, 0x311D90B6u, 0x89A1F7D3u, 0x1476CF6Au, 0xACCAA80Fu,
        0xBE7F07E1u, 0x06C36084u, 0x5EA070D2u, 0xE61C17B7u, 0xF4A9B859u, 0x4C15DF3Cu, 0xD1C2E785u,
        0x697E80E0u, 0x7BCB2F0Eu, 0xC377486Bu, 0xCB0D0FA2u, 0x73B168C7u, 0x6104C729u, 0xD9B8A04Cu,
        0x446F98F5u, 0xFCD3FF90u, 0xEE66507Eu, 0x56DA371Bu, 0x0EB9274Du, 0xB6054028u, 0xA4B0EFC6u,
        0x1C0C88A3u, 0x81DBB01Au, 0x3967D77Fu, 0x2BD27891u, 0x936E1FF4u, 0x3B26F703u, 0x839A9066u,
        0x912F3F88u, 0x299358EDu, 0xB4446054u, 0x0CF80731u, 0x1E4DA8DFu, 0xA6F1CFBAu, 0xFE92DFECu,
        0x462EB889u, 0x549B1767u, 0xEC277002u, 0x71F048BBu, 0xC94C2FDEu, 0xDBF98030u, 0x6345E755u,
        0x6B3FA09Cu, 0xD383C7F9u, 0xC1366817u, 0x798A0F72u, 0xE45D37CBu, 0x5CE150AEu, 0x4E54FF40u,
        0xF6E89825u, 0xAE8B8873u, 0x1637EF16u, 0x048240F8u, 0xBC3E279Du, 0x21E91F24u, 0x99557841u,
        0x8BE0D7AFu, 0x335CB0CAu, 0xED59B63Bu, 0x55E5D15Eu, 0x47507EB0u, 0xFFEC19D5u, 0x623B216Cu,
        0xDA874609u, 0xC832E9E7u, 0x708E8E82u, 0x28ED9ED4u, 0x9051F9B1u, 0x82E4565Fu, 0x3A58313Au,
        0xA78F0983u, 0x1F336EE6u, 0x0D86C108u, 0xB53AA66Du, 0xBD40E1A4u, 0x05FC86C1u, 0x1749292Fu,
        0xAFF54E4Au, 0x322276F3u, 0x8A9E1196u, 0x982BBE78u, 0x2097D91Du, 0x78F4C94Bu, 0xC048AE2Eu,
        0xD2FD01C0u, 0x6A4166A5u, 0xF7965E1Cu, 0x4F2A3979u, 0x5D9F9697u, 0xE523F1F2u, 0x4D6B1905u,
        0xF5D77E60u, 0xE762D18Eu, 0x5FDEB6EBu, 0xC2098E52u, 0x7AB5E937u, 0x680046D9u, 0xD0BC21BCu,
        0x88DF31EAu, 0x3063568Fu, 0x22D6F961u, 0x9A6A9E04u, 0x07BDA6BDu, 0xBF01C1D8u, 0xADB46E36u,
        0x15080953u, 0x1D724E9Au, 0xA5CE29FFu, 0xB77B8611u, 0x0FC7E174u, 0x9210D9CDu, 0x2AACBEA8u,
        0x38191146u, 0x80A57623u, 0xD8C66675u, 0x607A0110u, 0x72CFAEFEu, 0xCA73C99Bu, 0x57A4F122u,
        0xEF189647u, 0xFDAD39A9u, 0x45115ECCu, 0x764DEE06u, 0xCEF18963u, 0xDC44268Du, 0x64F841E8u,
        0xF92F7951u, 0x41931E34u, 0x5326B1DAu, 0xEB9AD6BFu, 0xB3F9C6E9u, 0x0B45A18Cu, 0x19F00E62u,
        0xA14C6907u, 0x3C9B51BEu, 0x842736DBu, 0x96929935u, 0x2E2EFE50u, 0x2654B999u, 0x9EE8DEFCu,
        0x8C5D7112u, 0x34E11677u, 0xA9362ECEu, 0x118A49ABu, 0x033FE645u, 0xBB838120u, 0xE3E09176u,
        0x5B5CF613u, 0x49E959FDu, 0xF1553E98u, 0x6C820621u, 0xD43E6144u, 0xC68BCEAAu, 0x7E37A9CFu,
        0xD67F4138u, 0x6EC3265Du, 0x7C7689B3u, 0xC4CAEED6u, 0x591DD66Fu, 0xE1A1B10Au, 0xF3141EE4u,
        0x4BA87981u, 0x13CB69D7u, 0xAB770EB2u, 0xB9C2A15Cu, 0x017EC639u, 0x9CA9FE80u, 0x241599E5u,
        0x36A0360Bu, 0x8E1C516Eu, 0x866616A7u, 0x3EDA71C2u, 0x2C6FDE2Cu, 0x94D3B949u, 0x090481F0u,
        0xB1B8E695u, 0xA30D497Bu, 0x1BB12E1Eu, 0x43D23E48u, 0xFB6E592Du, 0xE9DBF6C3u, 0x516791A6u,
        0xCCB0A91Fu, 0x740CCE7Au, 0x66B96194u, 0xDE0506F1u
    }
};
#endif

static uint32_t sbfw_crc32_update(uint32_t crc, const uint8_t *data, uint16_t n)
{
    uint16_t i;
#ifdef SBFW_CRC_SLICE4
    const uint8_t *const end4 = data + (n & ~3u);
    for (; data != end4; data += 4) {
        uint32_t w;
        memcpy(&w, data, 4u);           /* one load: a little-endian core (Cortex-M, RISC-V) */
        crc ^= w;
        crc = sbfw_crc32_slices[2][crc & 0xFFu] ^ sbfw_crc32_slices[1][(crc >> 8) & 0xFFu]
              ^ sbfw_crc32_slices[0][(crc >> 16) & 0xFFu] ^ sbfw_crc32_table[crc >> 24];
    }
    n &= 3u;
#endif
    for (i = 0u; i < n; ++i) {
        crc = sbfw_crc32_table[(crc ^ data[i]) & 0xFFu] ^ (crc >> 8);
    }
    return crc;
}
#endif

uint32_t sbfw_crc32(const uint8_t *data, uint16_t n)
{
    return sbfw_crc32_update(SBFW_CRC_INIT, data, n) ^ SBFW_CRC_INIT;
}

void sbfw_link_init(sbfw_link_t *l, uint8_t *rx, uint16_t rx_cap, uint8_t *tx, uint16_t tx_cap)
{
    memset(l, 0, sizeof *l);
    l->rx = rx;
    l->rx_cap = rx_cap;
    l->tx = tx;
    l->tx_cap = tx_cap;
}

static void sbfw_rx_clear(sbfw_link_t *l)
{
    l->rx_len = 0u;
    l->left = 0u;
    l->code = 0u;
    l->bad = 0u;
    l->over = 0u;
    l->over_len = 0u;
}

/* One decoded body byte: into rx, or (body longer than rx) through the CRC of the overflow. */
static void sbfw_rx_put(sbfw_link_t *l, uint8_t byte)
{
    if (!l->over && l->rx_len < l->rx_cap) {
        l->rx[l->rx_len++] = byte;
        return;
    }
    if (!l->over) {          /* rx is full (rx_cap >= 8): keep its last 4 bytes as the tail */
        l->over = 1u;
        l->over_crc = sbfw_crc32_update(SBFW_CRC_INIT, l->rx, (uint16_t)(l->rx_cap - 4u));
        memcpy(l->tail, l->rx + l->rx_cap - 4u, 4u);
    }
    if ((uint32_t)l->rx_cap + l->over_len >= SBFW_MAX_BODY) {
        l->bad = 1u;         /* longer than any valid frame */
        return;
    }
    l->over_len++;
    l->over_crc = sbfw_crc32_update(l->over_crc, l->tail, 1u);
    memmove(l->tail, l->tail + 1, 3u);
    l->tail[3] = byte;
}

/* The frame ended at a delimiter: check it and make it the ready request. */
static uint8_t sbfw_rx_end(sbfw_link_t *l)
{
    uint8_t status = SBFW_NONE;
    if (l->code == 0u) {
        return SBFW_NONE;                    /* an empty frame between two delimiters */
    }
    if (!l->bad && l->left == 0u && l->rx_len >= SBFW_OVERHEAD) {
        if (l->over) {
            if ((l->over_crc ^ SBFW_CRC_INIT) == sbfw_get_u32(l->tail)) {
                l->req_crc = sbfw_get_u32(l->tail);
                l->req_payload_len = 0u;
                status = SBFW_OVERSIZE;
            }
        } else if (sbfw_crc32(l->rx, (uint16_t)(l->rx_len - 4u))
                   == sbfw_get_u32(l->rx + l->rx_len - 4u)) {
            l->req_crc = sbfw_get_u32(l->rx + l->rx_len - 4u);
            l->req_payload_len = (uint16_t)(l->rx_len - SBFW_OVERHEAD);
            status = SBFW_FRAME;
        }
    }
    if (status == SBFW_NONE) {
        l->dropped++;
    } else {
        l->req_version = l->rx[0];
        l->req_seq = sbfw_get_u16(l->rx + 1);
        l->req_cmd = l->rx[3];
    }
    l->ready = status;
    return status;
}

uint8_t sbfw_link_feed(sbfw_link_t *l, uint8_t byte)
{
    uint8_t status;
    if (byte == 0u) {
        status = sbfw_rx_end(l);
        if (status == SBFW_NONE) {
            sbfw_rx_clear(l);
        }
        return status;
    }
    if (l->bad) {
        return SBFW_NONE;
    }
    if (l->left == 0u) {                     /* a code byte */
        if (l->code != 0u && l->code != 0xFFu) {
            sbfw_rx_put(l, 0u);              /* the zero the previous block stood for */
        }
        l->code = byte;
        l->left = (uint8_t)(byte - 1u);
        return SBFW_NONE;
    }
    sbfw_rx_put(l, byte);
    l->left--;
    return SBFW_NONE;
}

uint16_t sbfw_link_feed_block(sbfw_link_t *l, const uint8_t *data, uint16_t n)
{
    uint16_t i = 0u;
    uint8_t status = SBFW_NONE;
    while (i < n && status == SBFW_NONE) {
        if (l->left != 0u && !l->bad && !l->over) {
            /* inside a COBS block with room in rx: its data bytes go straight into rx, up to
             * the block's end, the chunk's end, rx's end or a 0x00 (a delimiter: byte path),
             * four at a time while none of the four is 0x00 */
            uint32_t k = l->left, m = 0u, w;
            const uint8_t *src = data + i;
            uint8_t *dst = l->rx + l->rx_len;
            if (k > (uint32_t)(n - i)) {
                k = (uint32_t)(n - i);
            }
            if (k > (uint32_t)(l->rx_cap - l->rx_len)) {
                k = (uint32_t)(l->rx_cap - l->rx_len);
            }
            while (m + 4u <= k) {
                memcpy(&w, src + m, 4u);
                if (((w - UINT32_C(0x01010101)) & ~w & UINT32_C(0x80808080)) != 0u) {
                    break;                   /* a 0x00 among these four */
                }
                memcpy(dst + m, &w, 4u);
                m += 4u;
            }
            while (m < k && src[m] != 0u) {
                dst[m] = src[m];
                ++m;
            }
            l->rx_len = (uint16_t)(l->rx_len + m);
            l->left = (uint8_t)(l->left - m);
            i = (uint16_t)(i + m);
            if (m != 0u && m == k) {
                continue;
            }
        }
        status = sbfw_link_feed(l, data[i++]);
    }
    return i;
}

uint8_t sbfw_link_done(sbfw_link_t *l)
{
    l->ready = SBFW_NONE;
    sbfw_rx_clear(l);
    return SBFW_NONE;
}

int sbfw_link_check(const sbfw_link_t *l)
{
    uint16_t ahead;
    if (l->req_version != SBFW_PROTOCOL_VERSION) {
        return SBFW_ERR_BAD_VERSION;
    }
    if (!l->cache_valid) {
        return SBFW_ERR_NONE;
    }
    ahead = (uint16_t)(l->req_seq - l->cache_seq);
    if (ahead == 0u && l->req_crc == l->cache_crc) {
        return -1;
    }
    return ahead == 0u || ahead >= 0x8000u ? SBFW_ERR_STALE : SBFW_ERR_NONE;
}

#ifdef SBFW_SEMIHOST_LINK
/* ARM (and RISC-V) semihosting (QEMU -semihosting-config enable=on,target=native): SYS_OPEN of
 * ":tt" opens QEMU's stdin (mode 0) or stdout (mode 4); SYS_READ returns the count of bytes NOT
 * read (it blocks until at least one is there); SYS_WRITE writes them all. */
#define SBFW_SH_OPEN 0x01u
#define SBFW_SH_WRITE 0x05u
#define SBFW_SH_READ 0x06u
#ifndef SBFW_SH_IN_BUF
#if defined(__riscv)
#define SBFW_SH_IN_BUF 2048u                 /* the FE310 has 16 KiB of RAM */
#else
#define SBFW_SH_IN_BUF 8192u                 /* a host writes up to 8 frames of ~1 KiB at once */
#endif
#endif
#define SBFW_SH_BUF 2048u
static uint8_t sbfw_sh_in[SBFW_SH_IN_BUF], sbfw_sh_out[SBFW_SH_BUF];
static uint16_t sbfw_sh_pos, sbfw_sh_len, sbfw_sh_fill;
static int32_t sbfw_sh_stdin = -1, sbfw_sh_stdout = -1;

#if defined(__riscv)
/* RISC-V semihosting (QEMU): the same operations, a0 = operation, a1 = block, trapped by the
 * uncompressed slli / ebreak / srai sequence (kept in one 16-byte aligned group). */
static int32_t sbfw_semihost(uint32_t op, volatile uint32_t *block)
{
    register uint32_t a0 __asm__("a0") = op;
    register volatile uint32_t *a1 __asm__("a1") = block;
    __asm__ volatile(".balign 16\n\t.option push\n\t.option norvc\n\t"
                     "slli zero, zero, 0x1f\n\tebreak\n\tsrai zero, zero, 7\n\t.option pop"
                     : "+r"(a0) : "r"(a1) : "memory");
    return (int32_t)a0;
}
#else
static int32_t sbfw_semihost(uint32_t op, volatile uint32_t *block)
{
    register uint32_t r0 __asm__("r0") = op;
    register volatile uint32_t *r1 __asm__("r1") = block;
    __asm__ volatile("bkpt 0xAB" : "+r"(r0) : "r"(r1) : "memory");
    return (int32_t)r0;
}
#endif

static int32_t sbfw_sh_open(uint32_t mode)
{
    static const char tt[] = ":tt";
    volatile uint32_t block[3];
    block[0] = (uint32_t)(uintptr_t)tt;
    block[1] = mode;
    block[2] = 3u;
    return sbfw_semihost(SBFW_SH_OPEN, block);
}

/* Refill the input buffer when it is empty (the answers written so far leave first: the host
 * may wait for them); 0 at the end of input. */
static int sbfw_sh_fill_in(void)
{
    if (sbfw_sh_pos == sbfw_sh_len) {
        volatile uint32_t block[3];
        int32_t left;
        sbfw_io_drain();
        if (sbfw_sh_stdin < 0) {
            sbfw_sh_stdin = sbfw_sh_open(0u);
        }
        block[0] = (uint32_t)sbfw_sh_stdin;
        block[1] = (uint32_t)(uintptr_t)sbfw_sh_in;
        block[2] = SBFW_SH_IN_BUF;
        left = sbfw_semihost(SBFW_SH_READ, block);
        if (left < 0 || (uint32_t)left >= SBFW_SH_IN_BUF) {
            return 0;                        /* end of input (or an error) */
        }
        sbfw_sh_len = (uint16_t)(SBFW_SH_IN_BUF - (uint32_t)left);
        sbfw_sh_pos = 0u;
    }
    return 1;
}

int sbfw_io_getc(void)
{
    return sbfw_sh_fill_in() ? sbfw_sh_in[sbfw_sh_pos++] : -1;
}

uint16_t sbfw_io_read(const uint8_t **data)
{
    uint16_t n;
    if (!sbfw_sh_fill_in()) {
        return 0u;
    }
    *data = sbfw_sh_in + sbfw_sh_pos;
    n = (uint16_t)(sbfw_sh_len - sbfw_sh_pos);
    sbfw_sh_pos = sbfw_sh_len;
    return n;
}

/* A response is complete: it leaves with the others when SBFW_SH_ANSWERS have gathered, before
 * the next read that waits for input, or when the buffer is full. A host that tops up its
 * requests in flight once half of them are answered (device_sim's Link.pipeline; the QEMU
 * backends keep 32 in flight, topped up 16 at a time) then sends the next ones while the
 * device computes the rest of what it has read. */
#ifndef SBFW_SH_ANSWERS
#define SBFW_SH_ANSWERS 16u
#endif
static uint8_t sbfw_sh_answers;

void sbfw_io_flush(void)
{
    if (++sbfw_sh_answers >= SBFW_SH_ANSWERS) {
        sbfw_io_drain();
    }
}

void sbfw_io_drain(void)
{
    volatile uint32_t block[3];
    if (sbfw_sh_fill == 0u) {
        return;
    }
    if (sbfw_sh_stdout < 0) {
        sbfw_sh_stdout = sbfw_sh_open(4u);
    }
    block[0] = (uint32_t)sbfw_sh_stdout;
    block[1] = (uint32_t)(uintptr_t)sbfw_sh_out;
    block[2] = sbfw_sh_fill;
    (void)sbfw_semihost(SBFW_SH_WRITE, block);
    sbfw_sh_fill = 0u;
    sbfw_sh_answers = 0u;
}

void sbfw_io_write(const uint8_t *data, uint16_t n)
{
    while (n > 0u) {
        uint16_t k = (uint16_t)(SBFW_SH_BUF - sbfw_sh_fill);
        if (k == 0u) {
            sbfw_io_drain();
            continue;
        }
        k = n < k ? n : k;
        memcpy(sbfw_sh_out + sbfw_sh_fill, data, k);
        sbfw_sh_fill = (uint16_t)(sbfw_sh_fill + k);
        data += k;
        n = (uint16_t)(n - k);
    }
}
#else
int sbfw_io_getc(void)
{
    return sbfw_hal_getc();
}

uint16_t sbfw_io_read(const uint8_t **data)
{
    static uint8_t byte;
    const int c = sbfw_hal_getc();
    if (c < 0) {
        return 0u;
    }
    byte = (uint8_t)c;
    *data = &byte;
    return 1u;
}

void sbfw_io_write(const uint8_t *data, uint16_t n)
{
    sbfw_hal_write(data, n);
}

void sbfw_io_flush(void)
{
    sbfw_hal_flush();
}

void sbfw_io_drain(void)
{
    /* sbfw_io_flush has sent every response already */
}
#endif

/* Write body as 0x00, COBS blocks, 0x00 (the canonical form of device_sim.protocol). */
static void sbfw_write_frame(const uint8_t *body, uint16_t n)
{
    static const uint8_t delim = 0u;
    uint16_t i = 0u;
    sbfw_io_write(&delim, 1u);
    for (;;) {
        uint16_t run = 0u;
        uint8_t code;
        while (i + run < n && body[i + run] != 0u && run < 254u) {
            run++;
        }
        code = (uint8_t)(run + 1u);
        sbfw_io_write(&code, 1u);
        sbfw_io_write(body + i, run);
        i = (uint16_t)(i + run);
        if (run == 254u) {
            continue;                        /* a full block stands for no zero */
        }
        if (i >= n) {
            break;
        }
        i++;                                 /* the zero this block stands for */
    }
    sbfw_io_write(&delim, 1u);
    sbfw_io_flush();
}

/* Header and CRC around the payload of n bytes at body + 4. */
static uint16_t sbfw_seal(uint8_t *body, uint16_t seq, uint8_t cmd, uint16_t n)
{
    body[0] = SBFW_PROTOCOL_VERSION;
    sbfw_put_u16(body + 1, seq);
    body[3] = cmd;
    sbfw_put_u32(body + 4u + n, sbfw_crc32(body, (uint16_t)(4u + n)));
    return (uint16_t)(n + SBFW_OVERHEAD);
}

void sbfw_link_resend(sbfw_link_t *l)
{
    sbfw_write_frame(l->tx, l->tx_len);
}

void sbfw_link_refuse(sbfw_link_t *l, uint8_t err)
{
    uint8_t body[SBFW_OVERHEAD + 4u];
    uint16_t n = 2u;
    body[4] = l->req_cmd;
    body[5] = err;
    if (err == SBFW_ERR_STALE) {
        sbfw_put_u16(body + 6, l->cache_seq);
        n = 4u;
    }
    sbfw_write_frame(body, sbfw_seal(body, l->req_seq, SBFW_CMD_ERROR, n));
}

const uint8_t *sbfw_link_request(const sbfw_link_t *l)
{
    return l->rx + 4;
}

uint8_t *sbfw_link_response(sbfw_link_t *l)
{
    return l->tx + 4;
}

uint16_t sbfw_link_response_cap(const sbfw_link_t *l)
{
    return (uint16_t)(l->tx_cap - SBFW_OVERHEAD);
}

void sbfw_link_send(sbfw_link_t *l, uint8_t cmd, uint16_t n)
{
    l->tx_len = sbfw_seal(l->tx, l->req_seq, cmd, n);
    l->cache_valid = 1u;
    l->cache_seq = l->req_seq;
    l->cache_crc = l->req_crc;
    sbfw_link_resend(l);
}
