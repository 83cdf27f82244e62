/**
 * A small hand-made quality set for the local text embedder: each row is an anchor, a paraphrase of it (mostly
 * with different words), and an unrelated sentence. Written for these tests; deterministic, English only.
 */

export interface QualityTriplet {
  anchor: string;
  paraphrase: string;
  unrelated: string;
}

export const QUALITY_TRIPLETS: readonly QualityTriplet[] = [
  {
    anchor: 'The cat is sleeping on the sofa.',
    paraphrase: 'A kitten naps on the couch.',
    unrelated: 'The central bank raised interest rates again.',
  },
  {
    anchor: 'How do I reset my password?',
    paraphrase: 'I forgot my login credentials and need to change them.',
    unrelated: 'The hikers reached the summit before sunrise.',
  },
  {
    anchor: 'The stock market fell sharply today.',
    paraphrase: 'Share prices dropped steeply this afternoon.',
    unrelated: 'She planted tomatoes in her garden.',
  },
  {
    anchor: 'He bought a new car last week.',
    paraphrase: 'Last week he purchased a brand new automobile.',
    unrelated: 'The orchestra performed a symphony by Beethoven.',
  },
  {
    anchor: 'The weather will be rainy tomorrow.',
    paraphrase: 'Expect showers and storms tomorrow.',
    unrelated: 'The software update fixed several security bugs.',
  },
  {
    anchor: 'The doctor prescribed antibiotics for the infection.',
    paraphrase: 'The physician gave her medicine to treat the bacterial illness.',
    unrelated: 'The football team won the championship final.',
  },
  {
    anchor: 'The children are playing in the park.',
    paraphrase: 'Kids are having fun at the playground.',
    unrelated: 'Quarterly revenue exceeded analyst expectations.',
  },
  {
    anchor: 'The flight was delayed by three hours.',
    paraphrase: 'Our plane departed three hours late.',
    unrelated: 'He painted the kitchen walls bright yellow.',
  },
  {
    anchor: 'The restaurant serves delicious Italian food.',
    paraphrase: 'That place cooks tasty pasta and pizza.',
    unrelated: 'The satellite was launched into orbit yesterday.',
  },
  {
    anchor: 'The company laid off hundreds of workers.',
    paraphrase: 'The firm cut many jobs and dismissed employees.',
    unrelated: 'The river flooded the nearby farmland.',
  },
  {
    anchor: 'She is studying for her chemistry exam.',
    paraphrase: 'She is preparing for a science test at school.',
    unrelated: 'The ship sailed across the Atlantic ocean.',
  },
  {
    anchor: 'The president signed the new law.',
    paraphrase: 'The legislation was approved by the head of state.',
    unrelated: 'My dog loves chasing tennis balls.',
  },
  {
    anchor: 'The movie was boring and far too long.',
    paraphrase: 'The film dragged on and was dull.',
    unrelated: 'Vaccines protect people against diseases.',
  },
  {
    anchor: 'The earthquake destroyed many buildings.',
    paraphrase: 'Houses collapsed after the strong tremor.',
    unrelated: 'He ordered coffee and a croissant.',
  },
  {
    anchor: 'I love listening to jazz music.',
    paraphrase: 'My favourite songs are by jazz musicians like saxophone players.',
    unrelated: 'The bridge was closed for repairs.',
  },
  {
    anchor: 'The police arrested the suspect last night.',
    paraphrase: 'Officers detained the man accused of the crime yesterday evening.',
    unrelated: 'The recipe calls for two cups of flour.',
  },
  {
    anchor: 'The laptop battery drains very quickly.',
    paraphrase: 'My notebook computer runs out of power fast.',
    unrelated: 'The election results will be announced on Sunday.',
  },
  {
    anchor: 'Please send me the invoice by email.',
    paraphrase: 'Could you mail the bill to my inbox?',
    unrelated: 'Lions hunt zebras on the savanna.',
  },
  {
    anchor: 'The museum displays ancient Egyptian artifacts.',
    paraphrase: 'The gallery exhibits relics from old Egypt.',
    unrelated: 'The printer is out of ink.',
  },
  {
    anchor: 'Global temperatures are rising because of climate change.',
    paraphrase: 'The planet is warming due to greenhouse gas emissions.',
    unrelated: 'The baby took her first steps today.',
  },
  {
    anchor: 'The team scored a goal in the final minute.',
    paraphrase: 'They netted the winner just before the match ended.',
    unrelated: 'The lawyer filed a motion with the court.',
  },
  {
    anchor: 'The hotel room was clean and comfortable.',
    paraphrase: 'Our accommodation was tidy and cosy.',
    unrelated: 'The volcano erupted and spewed lava.',
  },
  {
    anchor: 'He is learning to play the guitar.',
    paraphrase: 'He takes lessons on a stringed instrument.',
    unrelated: 'Unemployment fell to its lowest level in a decade.',
  },
  {
    anchor: 'The train to London leaves at noon.',
    paraphrase: 'The railway service to the British capital departs at midday.',
    unrelated: 'She adopted a puppy from the shelter.',
  },
  {
    anchor: 'The soup is too salty.',
    paraphrase: 'There is far too much salt in this broth.',
    unrelated: 'The spacecraft landed on Mars.',
  },
  {
    anchor: 'Our internet connection keeps dropping.',
    paraphrase: 'The wifi network disconnects constantly.',
    unrelated: 'The farmers harvested the wheat in August.',
  },
  {
    anchor: 'The patient recovered fully after surgery.',
    paraphrase: 'Following the operation, the man was completely healed.',
    unrelated: 'The city council approved a new parking fee.',
  },
  {
    anchor: 'The price of gasoline went up again.',
    paraphrase: 'Fuel costs increased once more.',
    unrelated: 'The poet read verses to a small audience.',
  },
  {
    anchor: 'The students protested against tuition fees.',
    paraphrase: 'University pupils demonstrated over the cost of education.',
    unrelated: 'The fisherman caught a huge salmon.',
  },
  {
    anchor: 'Water boils at one hundred degrees Celsius.',
    paraphrase: 'At sea level the boiling point of water is 100 degrees.',
    unrelated: 'The singer released a new album.',
  },
  {
    anchor: 'The bank approved my mortgage application.',
    paraphrase: 'The lender accepted my request for a home loan.',
    unrelated: 'The birds migrate south for the winter.',
  },
  {
    anchor: 'The garden is full of blooming roses.',
    paraphrase: 'Many flowers are blossoming in the yard.',
    unrelated: 'The server crashed because of a memory leak.',
  },
];

/** Lexical near-duplicates (typos, casing, word order): must stay very close. */
export const NEAR_DUPLICATES: readonly (readonly [string, string])[] = [
  ['Invoice number 4471 is overdue.', 'invoice numbr 4471 is overdue'],
  ['The quick brown fox jumps over the lazy dog.', 'the quick brown fox jumped over the lazy dog'],
  ['getUserName returns the current user name', 'get_user_name returns the current username'],
  ['Tesseract OCR reads scanned receipts', 'Tesseract ocr reads scaned receipts.'],
];

/**
 * Hard cases: the distractor shares words with the anchor but means something else (word order, negation, word
 * sense). A bag-of-words embedder is expected to fail many of these; the test reports the score.
 */
export const HARD_TRIPLETS: readonly QualityTriplet[] = [
  {
    anchor: 'The dog bit the man.',
    paraphrase: 'A man was attacked by a dog.',
    unrelated: 'The man bit the dog.',
  },
  {
    anchor: 'The movie was not good.',
    paraphrase: 'The film was bad.',
    unrelated: 'The movie was good.',
  },
  {
    anchor: 'The bank approved my loan.',
    paraphrase: 'The lender accepted my credit application.',
    unrelated: 'We sat on the river bank and watched the water.',
  },
  {
    anchor: 'She left the party early.',
    paraphrase: 'She went home before the celebration ended.',
    unrelated: 'The political party left the coalition early.',
  },
  {
    anchor: 'Apple released a new phone.',
    paraphrase: 'The iPhone maker launched another smartphone.',
    unrelated: 'She ate a new apple.',
  },
  {
    anchor: 'The meeting is cancelled.',
    paraphrase: 'The meeting will not take place.',
    unrelated: 'The meeting is confirmed.',
  },
  {
    anchor: 'Prices rose after the announcement.',
    paraphrase: 'Costs went up following the news.',
    unrelated: 'Prices fell after the announcement.',
  },
  {
    anchor: 'He is allergic to peanuts.',
    paraphrase: 'Eating nuts makes him sick.',
    unrelated: 'He sells peanuts at the stadium.',
  },
];
